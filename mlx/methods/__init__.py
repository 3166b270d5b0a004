"""The methods, as scikit-learn estimators: ``from mlx.methods import LEML, BR, ...``.

Methods register themselves in :data:`METHODS` on import. Each module is imported on the first
use of its name (``METHODS.get("leml")`` or ``from mlx.methods import LEML``), so that start-up
does not load every method's libraries (scikit-learn, LIBLINEAR, numba, ...).
"""

from mlx.registry import Registry

METHODS = Registry("method")
"""Method name -> class (a subclass of :class:`mlx.methods.base.BaseMethod`)."""

for _name in ("bcs", "br", "constant", "cplst", "landmark", "leml", "lsvv", "mom", "wsabie"):
    METHODS.register_lazy(_name, f"mlx.methods.{_name}")
for _name in ("plt", "omikuji"):   # the optional extreme-classification methods
    METHODS.register_lazy(_name, "mlx.methods.xmc")
del _name

_CLASSES = {"BCS": "bcs", "BR": "br", "Constant": "constant", "CPLST": "cplst",
            "Landmark": "landmark", "LEML": "leml", "LSVV": "lsvv", "MoM": "mom",
            "WSABIE": "wsabie", "PLT": "plt", "Omikuji": "omikuji"}

__all__ = ["METHODS", "BCS", "BR", "CPLST", "Constant", "LEML", "LSVV", "Landmark", "MoM",
           "Omikuji", "PLT", "WSABIE"]


def __getattr__(name):
    if name in _CLASSES:
        return METHODS.get(_CLASSES[name])
    # a method's module, e.g. mlx.methods.leml
    if name in METHODS and name not in ("plt", "omikuji"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
