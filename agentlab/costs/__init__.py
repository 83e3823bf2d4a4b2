"""From usage records to money and frames: the price table and the pandas usage frame."""
