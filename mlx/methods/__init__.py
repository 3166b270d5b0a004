"""Methods register themselves on import; import every module here."""

from mlx.methods.base import METHODS  # noqa: F401
from mlx.methods import br  # noqa: F401
