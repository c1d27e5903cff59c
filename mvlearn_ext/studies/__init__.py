"""Monte Carlo studies on joblib: settings x replications, reproducible and resumable.

A :class:`Study` runs ``replicate(setting, rng)`` for every setting and
replication, with seeds from ``numpy.random.SeedSequence`` keyed by the
setting's content and the replication index, so the numbers are identical on
every backend ("loky", "threading", "sequential", "dask" with a
``distributed.Client``) and for every ``n_jobs``. Finished replications are
appended to a JSON-lines file as they finish, and a rerun resumes. Results
are tidy records (a ``pandas.DataFrame``, one row per record);
:func:`summarize` gives mean, standard error and count per group and
:func:`plot_summary` draws them (matplotlib, the ``bench`` extra).

Examples
--------
>>> from mvlearn_ext.studies import Study, summarize
>>> def replicate(setting, rng):
...     return {"mean": float(rng.normal(setting["mu"], 1.0, size=100).mean())}
>>> study = Study(replicate, [{"mu": 0.0}, {"mu": 1.0}], n_replications=20, root_seed=1)
>>> table = summarize(study.run(progress=False), by="mu", value="mean")
>>> table["n"].tolist(), bool(abs(table["mean"][1] - 1.0) < 4 * table["se"][1])
([20, 20], True)
"""

from ._plot import plot_summary
from ._seeding import setting_key
from ._study import ReplicationError, Study, load_results, to_frame
from ._summary import LogLogFit, fit_loglog_slope, format_summary, summarize

__all__ = [
    "LogLogFit",
    "ReplicationError",
    "Study",
    "fit_loglog_slope",
    "format_summary",
    "load_results",
    "plot_summary",
    "setting_key",
    "summarize",
    "to_frame",
]
