"""mlx: reproducible experiments for multi-label and vector-valued learning."""

__version__ = "0.1.0"


def __getattr__(name):
    # mlx.load_model(RESULTS, cell_id), imported on first use: `import mlx` stays light.
    if name == "load_model":
        from mlx.runner.models import load_model

        return load_model
    raise AttributeError(f"module 'mlx' has no attribute {name!r}")
