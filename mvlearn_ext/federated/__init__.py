"""Federated learning: personalised FL by multi-task averaging of KMEs, DREAM, simulators."""

from mvlearn_ext.federated._dream import (
    DREAMClient,
    DREAMServer,
    FMOLResult,
    InProcessSimulator,
    QuadraticFMOL,
    run_dream,
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

__all__ = [
    "DREAMClient",
    "DREAMServer",
    "FMOLResult",
    "InProcessSimulator",
    "KMEPersonalizedRidge",
    "QuadraticFMOL",
    "RandomFourierMap",
    "agent_kme_statistics",
    "agent_ridge_statistics",
    "collaboration_weights",
    "ditto_ridge",
    "mmd2_unbiased",
    "run_dream",
    "weighted_ridge",
]
