"""The simulated batch APIs of the three providers, over one store of files and jobs."""
