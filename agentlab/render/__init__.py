"""Presentation shared by core and the notebook layer: HTML tables for ``_repr_html_`` and every
matplotlib chart. Imports neither the loop nor the notebook.
"""
