"""Federated learning: personalised FL by multi-task averaging of KMEs, DREAM, simulators.

The Flower adapter (``make_client_app``, ``make_server_app``, ``run_flower_*``,
``InProcessGrid``) imports ``flwr`` only when called (the ``federated`` extra).
"""

from mvlearn_ext.federated._dream import (
    DREAMClient,
    DREAMServer,
    FMOLResult,
    InProcessSimulator,
    QuadraticFMOL,
    dream_direction,
    dream_weights,
    run_dream,
)
from mvlearn_ext.federated._flower import make_client_app, make_server_app
from mvlearn_ext.federated._flower_grid import (
    InProcessGrid,
    run_flower_inprocess,
    run_flower_simulation,
)
from mvlearn_ext.federated._kme import (
    KMEPersonalizedRidge,
    RandomFourierMap,
    agent_kme_statistics,
    agent_ridge_statistics,
    collaboration_weights,
    ditto_ridge,
    mmd2_unbiased,
    weighted_ridge,
)
from mvlearn_ext.federated._kme_protocol import KMEProtocolClient, KMEProtocolServer

__all__ = [
    "DREAMClient",
    "DREAMServer",
    "FMOLResult",
    "InProcessGrid",
    "InProcessSimulator",
    "KMEPersonalizedRidge",
    "KMEProtocolClient",
    "KMEProtocolServer",
    "QuadraticFMOL",
    "RandomFourierMap",
    "agent_kme_statistics",
    "agent_ridge_statistics",
    "collaboration_weights",
    "ditto_ridge",
    "dream_direction",
    "dream_weights",
    "make_client_app",
    "make_server_app",
    "mmd2_unbiased",
    "run_dream",
    "run_flower_inprocess",
    "run_flower_simulation",
    "weighted_ridge",
]
