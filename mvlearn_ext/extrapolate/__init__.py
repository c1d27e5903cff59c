"""Task extrapolation: RTE, the Relational Task Extrapolator (NumPy / scikit-learn).

RTE (Ousherovitch and Wang, ICML 2026, arXiv 2605.30132) decomposes an
unseen target task into a known anchor task and a transformation, and learns
a relational operator ``Psi`` that maps (anchor, transformation) to the
target's predictions. The mechanism follows a detailed third-party summary
of the paper (its code was not available); the whole function-prediction
setting is torch-free.

Continuous regime (parameter extrapolation)
    :class:`RelationalTaskExtrapolator` (``phi = theta_target - theta_anchor``)
    and its inductive baseline :class:`InductiveTaskRegressor`; the families
    :class:`QuadraticFamily`, :class:`SinTrendFamily`,
    :class:`ExponentialFamily`; :func:`make_function_tasks`,
    :func:`sample_task_pairs`.
Discrete regime (length and compositional extrapolation)
    :class:`CompositionalTaskExtrapolator` (``f = g o f_anchor``, chained)
    and :class:`InductiveCompositionRegressor`; :data:`PRIMITIVES`,
    :func:`compose_primitives`, :func:`all_codes`,
    :func:`make_composition_tasks`.

Not implemented: the LLM/LoRA sequence-prediction regime and a trained
(neural) decomposer; the discrete decomposition is an enumeration.
"""

from mvlearn_ext.extrapolate._compose import (
    PRIMITIVES,
    CompositionalTaskExtrapolator,
    InductiveCompositionRegressor,
    all_codes,
    compose_primitives,
    make_composition_tasks,
)
from mvlearn_ext.extrapolate._continuous import (
    InductiveTaskRegressor,
    RelationalTaskExtrapolator,
)
from mvlearn_ext.extrapolate._families import (
    ExponentialFamily,
    FunctionFamily,
    QuadraticFamily,
    SinTrendFamily,
    get_family,
    make_function_tasks,
    sample_task_pairs,
)

__all__ = [
    "PRIMITIVES",
    "CompositionalTaskExtrapolator",
    "ExponentialFamily",
    "FunctionFamily",
    "InductiveCompositionRegressor",
    "InductiveTaskRegressor",
    "QuadraticFamily",
    "RelationalTaskExtrapolator",
    "SinTrendFamily",
    "all_codes",
    "compose_primitives",
    "get_family",
    "make_composition_tasks",
    "make_function_tasks",
    "sample_task_pairs",
]
