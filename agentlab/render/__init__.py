"""Presentation shared by core and the notebook layer; imports neither the loop nor the notebook.

HTML tables for ``_repr_html_`` and every matplotlib chart.
"""
