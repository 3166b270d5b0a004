"""The methods, as scikit-learn estimators: ``from mlx.methods import LEML, BR, ...``.

Methods register themselves in :data:`METHODS` on import; import every module here.
"""

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
from mlx.methods import xmc  # noqa: F401
from mlx.methods.bcs import BCS
from mlx.methods.br import BR
from mlx.methods.constant import Constant
from mlx.methods.cplst import CPLST
from mlx.methods.landmark import Landmark
from mlx.methods.leml import LEML
from mlx.methods.lsvv import LSVV
from mlx.methods.mom import MoM
from mlx.methods.wsabie import WSABIE
from mlx.methods.xmc import PLT, Omikuji

__all__ = ["METHODS", "BCS", "BR", "CPLST", "Constant", "LEML", "LSVV", "Landmark", "MoM",
           "Omikuji", "PLT", "WSABIE"]
