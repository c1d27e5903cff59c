"""Data sets: the embedded Handwritten data and synthetic generators.

:func:`load_handwritten`, :func:`handwritten_view_names`
    The UCI "Multiple Features" handwritten digits, six views, shipped with
    the package (no download), and the codes of a selection of its views.
:func:`make_multiview_blobs`
    Gaussian clusters seen through several views, with per-view
    informativeness and noise.
:func:`make_contaminated_tasks`
    Linear regression tasks around a common centre, some of them outliers
    (the simulation settings of robust multi-task regression).
:func:`make_digit_experts`
    Small networks fine-tuned from one pre-trained network on disjoint digit
    classes, with held-out data per task: a problem to try model merging on.
:func:`mvc_suite_names`, :func:`load_mvc_dataset`, :func:`load_mvc_suite`
    A suite of multi-view clustering data sets (Handwritten and variants with
    noise views, synthetic blobs, wine, iris; digits and breast cancer held
    out for evaluation), built locally.
:func:`mvc_real_suite_names`, :func:`load_mvc_real_suite`
    A development suite of real multi-view clustering data (Handwritten,
    digits, breast cancer, nutrimouse, two time-series sets seen through
    redundant transforms, small-sample subsets, generated sets with one
    strong view), built locally.
"""

from mvlearn_ext.datasets._generators import make_multiview_blobs
from mvlearn_ext.datasets._handwritten import handwritten_view_names, load_handwritten
from mvlearn_ext.datasets._merging import make_digit_experts
from mvlearn_ext.datasets._multitask import make_contaminated_tasks
from mvlearn_ext.datasets._real_suite import load_mvc_real_suite, mvc_real_suite_names
from mvlearn_ext.datasets._suite import load_mvc_dataset, load_mvc_suite, mvc_suite_names

__all__ = [
    "handwritten_view_names",
    "load_handwritten",
    "load_mvc_dataset",
    "load_mvc_real_suite",
    "load_mvc_suite",
    "make_contaminated_tasks",
    "make_digit_experts",
    "make_multiview_blobs",
    "mvc_real_suite_names",
    "mvc_suite_names",
]
