"""The torch bridge: deep multi-view, multi-task and multi-objective methods.

Needs the ``torch`` extra. Install the pinned CPU build first::

    pip install torch==2.13.0
    pip install "mvlearn_ext[torch]"

Importing :mod:`mvlearn_ext` never imports torch; importing this subpackage
does, and raises one ``ImportError`` naming the extra when torch is missing.
Framework-free parts of the deep methods (losses, rewards, schedulers,
merging operators) live in the NumPy subpackages; only code that needs torch
lives here, one module (or package) per family.
"""

from mvlearn_ext.utils._optional import import_optional

torch = import_optional("torch", feature="mvlearn_ext.deep")

from mvlearn_ext.adapters import LoRAMoELinear  # noqa: E402
from mvlearn_ext.brain import PhenoBrainClassifier  # noqa: E402
from mvlearn_ext.deep.diffusion import (  # noqa: E402
    ConditionalDiffusion,
    EpsMLP,
    GaussianDSMDiffusion,
    TwoStageDiffusion,
)
from mvlearn_ext.deep.gaussian_process import (  # noqa: E402
    GSLVMOGPRegressor,
    LipschitzResNet,
    TLVMOGPRegressor,
)
from mvlearn_ext.deep.rl import grpo_loss, kl_k3, token_entropy, token_log_probs  # noqa: E402
from mvlearn_ext.incomplete import CIMLN  # noqa: E402
from mvlearn_ext.longtail import (  # noqa: E402
    AESClassifier,
    ARSLoss,
    BalancedSoftmaxLoss,
    EntropyPCGrad,
    FusionModule,
    LogitAdjustedLoss,
)
from mvlearn_ext.utils._torch import (  # noqa: E402
    as_numpy,
    as_tensor,
    resolve_device,
    seeded_generator,
)

__all__ = [
    "AESClassifier",
    "ARSLoss",
    "BalancedSoftmaxLoss",
    "CIMLN",
    "ConditionalDiffusion",
    "EpsMLP",
    "EntropyPCGrad",
    "FusionModule",
    "GSLVMOGPRegressor",
    "GaussianDSMDiffusion",
    "LipschitzResNet",
    "LoRAMoELinear",
    "LogitAdjustedLoss",
    "PhenoBrainClassifier",
    "TLVMOGPRegressor",
    "TwoStageDiffusion",
    "as_numpy",
    "as_tensor",
    "grpo_loss",
    "kl_k3",
    "resolve_device",
    "seeded_generator",
    "token_entropy",
    "token_log_probs",
]
