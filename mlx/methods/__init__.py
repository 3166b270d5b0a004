"""Methods register themselves on import; import every module here."""

from mlx.methods.base import METHODS  # noqa: F401
from mlx.methods import bcs  # noqa: F401
from mlx.methods import br  # noqa: F401
from mlx.methods import constant  # noqa: F401
from mlx.methods import cplst  # noqa: F401
from mlx.methods import landmark  # noqa: F401
from mlx.methods import leml  # noqa: F401
from mlx.methods import lsvv  # noqa: F401
from mlx.methods import mom  # noqa: F401
from mlx.methods import wsabie  # noqa: F401
