"""mlx: reproducible experiments for multi-label and vector-valued learning."""

__version__ = "0.1.0"
