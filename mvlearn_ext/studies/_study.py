"""The Monte Carlo study runner: settings x replications on joblib (or dask), resumable."""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import numbers
import os
import warnings
from collections.abc import Callable, Mapping, Sequence

from mvlearn_ext.utils import effective_n_jobs

from ._seeding import (
    SEEDING_SCHEME,
    _check_root_seed,
    canonical_json,
    jsonable,
    setting_key,
)
from ._storage import (
    ResultsWriter,
    _dumps,
    make_header,
    read_results_file,
    write_new_file,
)
from ._workers import RESERVED, run_replication, thread_limits

__all__ = ["ReplicationError", "Study", "load_results", "to_frame"]

_BACKENDS = ("loky", "threading", "sequential", "dask")
_OUTPUTS = ("frame", "records")


class ReplicationError(RuntimeError):
    """An exception raised inside one replication, re-raised naming where it happened.

    The original exception is ``__cause__``; its type and message are in the
    message, with the worker's traceback when it ran in another process.

    Parameters
    ----------
    message : str
        The error message.
    setting_id : int or None, default=None
        Position of the setting in :attr:`Study.settings`.
    setting : dict or None, default=None
        The setting.
    replication : int or None, default=None
        The replication index.
    failures : list of Exception or None, default=None
        The errors of every failed replication; None: ``[self]``.

    Attributes
    ----------
    setting_id : int
        Position of the setting in :attr:`Study.settings`.
    setting : dict
        The setting.
    replication : int
        The replication index.
    failures : list of Exception
        With ``Study.run(on_error="continue")``: the error of every failed
        replication (each with ``setting_id``, ``setting``, ``replication``);
        otherwise ``[self]``.
    results : list of dict or None
        With ``on_error="continue"``: the tidy records of the replications
        that finished (as ``Study.run(output="records")`` returns them).

    See Also
    --------
    Study : Raises it, or collects it with ``on_error="continue"``.

    Examples
    --------
    >>> from mvlearn_ext.studies import Study, ReplicationError
    >>> def replicate(setting, rng):
    ...     raise RuntimeError("boom")
    >>> try:
    ...     Study.from_grid(replicate, {"n": [1]}, n_replications=1).run(progress=False)
    ... except ReplicationError as error:
    ...     print(error.setting, error.replication)
    {'n': 1} 0
    """

    def __init__(self, message, setting_id=None, setting=None, replication=None, failures=None):
        super().__init__(message)
        self.setting_id = setting_id
        self.setting = setting
        self.replication = replication
        self.failures = [self] if failures is None else list(failures)
        self.results = None

    def __reduce__(self):
        failures = None if self.failures == [self] else self.failures
        args = (self.args[0], self.setting_id, self.setting, self.replication, failures)
        return (type(self), args)


def _callable_name(fn) -> str:
    while isinstance(fn, functools.partial):
        fn = fn.func
    module = getattr(fn, "__module__", None) or "?"
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{module}.{name}"


def _check_settings(settings) -> list[dict]:
    """Validate ``settings`` and return their JSON-ready copies."""
    if (
        isinstance(settings, (Mapping, str, bytes))
        or not hasattr(settings, "__iter__")
        or hasattr(settings, "shape")  # an array is not a list of settings
    ):
        raise TypeError(
            "settings must be a list of dicts (use Study.from_grid for a grid), got "
            f"{type(settings).__name__}"
        )
    settings = list(settings)
    if len(settings) == 0:
        raise ValueError("settings is empty: a study needs at least one setting")
    out, seen = [], {}
    for i, setting in enumerate(settings):
        if not isinstance(setting, Mapping):
            raise TypeError(f"settings[{i}] must be a dict, got {type(setting).__name__}")
        clean = jsonable(setting, where=f"settings[{i}]")
        reserved = [k for k in clean if k in RESERVED]
        if reserved:
            raise ValueError(
                f"settings[{i}] uses the reserved key(s) {reserved}: the runner adds "
                f"{list(RESERVED)} to every record"
            )
        text = canonical_json(clean)
        if text in seen:
            raise ValueError(
                f"settings[{i}] duplicates settings[{seen[text]}] ({text}): equal settings "
                "get equal seeds; use more replications instead"
            )
        seen[text] = i
        # What the replicate function receives is what a resumed run reads back
        # (key order kept: it is the column order of the results).
        out.append(json.loads(json.dumps(clean, allow_nan=True)))
    return out


def _import_pandas(feature):
    try:
        import pandas
    except ImportError as exc:
        raise ImportError(
            f"{feature} needs the optional dependency 'pandas' (pip install pandas); "
            "or ask for output='records' to get a list of dicts"
        ) from exc
    return pandas


def _import_distributed():
    """``distributed``, or one ImportError naming the extra (as utils._optional does)."""
    from ..utils._optional import _EXTRAS, import_optional

    feature = "Study.run(backend='dask')"
    import_optional("dask", feature=feature)
    try:
        import distributed
    except ImportError as exc:
        extra, how = _EXTRAS.get("distributed", _EXTRAS["dask"])
        raise ImportError(
            f"{feature} needs the optional dependency 'distributed' (extra '{extra}'): {how}"
        ) from exc
    return distributed


def to_frame(records):
    """A ``pandas.DataFrame`` of tidy records (a list of dicts), one row each.

    Parameters
    ----------
    records : list of dict
        For example ``Study.run(output="records")`` or :func:`load_results`
        with ``output="records"``.

    Returns
    -------
    frame : pandas.DataFrame
        Columns in order of first appearance.

    Raises
    ------
    ImportError
        If pandas is not installed.

    See Also
    --------
    load_results : Reads records from a results file.

    Examples
    --------
    >>> to_frame([{"method": "mean", "mse": 0.5}, {"method": "median", "mse": 0.7}])
       method  mse
    0    mean  0.5
    1  median  0.7
    """
    pd = _import_pandas("to_frame")
    return pd.DataFrame.from_records(list(records))


def _rows(settings, n_replications, key_hex, done):
    """Tidy rows in a fixed order: setting, replication, record."""
    rows = []
    for i, setting in enumerate(settings):
        for r in range(n_replications):
            for rec in done.get((key_hex[i], r), ()):
                rows.append({**setting, "setting_id": i, "replication": r, **rec})
    return rows


def _output(rows, settings, output, feature):
    if output == "records":
        return rows
    pd = _import_pandas(feature)
    if rows:
        return pd.DataFrame.from_records(rows)
    columns = list(dict.fromkeys(k for s in settings for k in s)) + list(RESERVED)
    return pd.DataFrame(columns=columns)


def load_results(path, *, output="frame"):
    """Read the finished replications of a results file, without running anything.

    Parameters
    ----------
    path : str or os.PathLike
        A file written by :meth:`Study.run`.
    output : {"frame", "records"}, default="frame"
        A ``pandas.DataFrame`` or a list of dicts (no pandas needed).

    Returns
    -------
    results : pandas.DataFrame or list of dict
        The tidy records, as :meth:`Study.run` returns them, with
        ``setting_id`` the position of the setting in the file's header.

    See Also
    --------
    Study : Writes the results file.
    to_frame : The records as a data frame.

    Examples
    --------
    >>> import os, tempfile
    >>> from mvlearn_ext.studies import Study, load_results
    >>> def replicate(setting, rng):
    ...     return [{"value": float(rng.normal(setting["mu"]))}]
    >>> path = os.path.join(tempfile.mkdtemp(), "results.jsonl")
    >>> study = Study.from_grid(replicate, {"mu": [0.0, 1.0]}, n_replications=3, path=path)
    >>> _ = study.run(progress=False)
    >>> load_results(path).shape
    (6, 4)
    """
    if output not in _OUTPUTS:
        raise ValueError(f"output must be one of {_OUTPUTS}, got {output!r}")
    header, done = read_results_file(path)
    if header is None:
        raise ValueError(f"{os.fspath(path)!r} holds no results (it is missing or empty)")
    settings = header["settings"]
    key_hex = [f"{setting_key(s):016x}" for s in settings]
    n_max = max((r + 1 for _, r in done), default=0)
    rows = _rows(settings, max(n_max, header["n_replications"]), key_hex, done)
    return _output(rows, settings, output, "load_results")


class Study:
    """A Monte Carlo study: a replicate function run over settings x replications.

    Replication ``r`` of a setting calls ``replicate(setting, rng)`` with a
    ``numpy.random.Generator`` whose seed depends only on ``root_seed``, the
    setting's content and ``r`` (see Notes), so the numbers are the same on
    every backend, for every ``n_jobs`` and in every order of execution. The
    function returns one record (a dict of JSON-ready values, e.g.
    ``{"mse": 0.1}``) or a list of them (e.g. one per method). With ``path``
    every finished replication is appended to a JSON-lines file at once, and a
    rerun with the same path resumes: finished replications are read back,
    not recomputed.

    Parameters
    ----------
    replicate : callable
        ``replicate(setting: dict, rng: numpy.random.Generator) -> dict | list[dict]``.
        It must be picklable for process backends ("loky", dask with
        processes): a module-level function, or a ``functools.partial`` of one.
        For Numba kernels draw integer seeds with ``int(rng.integers(2**63 - 1))``.
    settings : list of dict
        One dict per setting, with ``str`` keys and JSON-serialisable values
        (numbers, strings, booleans, ``None``, lists, dicts; NumPy scalars and
        arrays are converted, tuples become lists). Keys ``"setting_id"`` and
        ``"replication"`` are reserved; equal settings are refused.
        ``replicate`` receives the setting as it reads back from JSON.
    n_replications : int
        Replications per setting, at least 1.
    root_seed : int or sequence of int, default=0
        Entropy of the root ``numpy.random.SeedSequence``.
    path : str or os.PathLike, optional
        The JSON-lines results file (created if missing). ``None`` keeps the
        results in memory only.

    Attributes
    ----------
    settings : list of dict
        The validated settings; ``setting_id`` in the results is a position here.
    setting_keys : list of int
        The 64-bit key of each setting that enters its seeds.

    See Also
    --------
    summarize : Mean, standard error and count per group of a results frame.
    plot_summary : Draw a summary with error bands or bars.
    load_results : Read a results file without running.

    Notes
    -----
    **Seeding.** Let ``k`` be the first 8 bytes (big-endian) of the SHA-256 of
    the setting's canonical JSON (``sort_keys=True``, no spaces). Replication
    ``r`` uses ``Generator(PCG64(SeedSequence(root_seed, spawn_key=(k, r))))``,
    the child that ``SeedSequence(root_seed).spawn(k + 1)[k].spawn(r + 1)[r]``
    would give. Adding, removing or reordering settings, or raising
    ``n_replications``, leaves the numbers of the other (setting, replication)
    pairs unchanged. ``1`` and ``1.0`` are different settings (their JSON
    differs), and so are settings that differ by a key that ``replicate``
    ignores.

    **Results file.** Line 1 is a header (format version, seeding scheme,
    ``root_seed``, ``n_replications``, the replicate function's name, the
    settings); each further line is one finished replication,
    ``{"setting": <key as 16 hex digits>, "replication": r, "records": [...],
    "seconds": ...}``, written by the parent process in one ``write`` call
    and flushed. A run that finds the file resumes if the header describes the
    same study (same ``root_seed``, ``n_replications`` and set of settings) and
    raises ``ValueError`` otherwise. The file cannot know the replicate
    function's code: after changing it, use a new path or ``overwrite=True``.
    Run one study per file at a time.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.studies import Study, summarize
    >>> def replicate(setting, rng):
    ...     x = rng.normal(0.0, setting["sigma"], size=setting["n"])
    ...     return [{"method": "mean", "sq_err": float(np.mean(x) ** 2)},
    ...             {"method": "median", "sq_err": float(np.median(x) ** 2)}]
    >>> study = Study.from_grid(replicate, {"sigma": [1.0, 2.0], "n": [20]},
    ...                         n_replications=50, root_seed=0)
    >>> frame = study.run(progress=False)
    >>> frame.shape
    (200, 6)
    >>> list(frame.columns)
    ['sigma', 'n', 'setting_id', 'replication', 'method', 'sq_err']
    >>> table = summarize(frame, by=["sigma", "method"], value="sq_err")
    >>> list(table.columns)
    ['sigma', 'method', 'mean', 'se', 'n', 'std']
    >>> bool((table["mean"] > 0).all()), table["n"].tolist()
    (True, [50, 50, 50, 50])
    >>> frame.equals(study.run(backend="threading", n_jobs=2, progress=False))
    True
    """

    def __init__(
        self,
        replicate: Callable,
        settings,
        *,
        n_replications: int,
        root_seed=0,
        path=None,
    ):
        if not callable(replicate):
            raise TypeError(f"replicate must be callable, got {type(replicate).__name__}")
        if isinstance(n_replications, bool) or not isinstance(n_replications, numbers.Integral):
            raise TypeError(
                f"n_replications must be an int >= 1, got {type(n_replications).__name__}"
            )
        if n_replications < 1:
            raise ValueError(f"n_replications must be >= 1, got {n_replications}")
        if path is not None and not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str, an os.PathLike or None, got {path!r}")
        self.replicate = replicate
        self.settings = _check_settings(settings)
        self.n_replications = int(n_replications)
        self.root_seed = _check_root_seed(root_seed)
        self.path = path
        self.setting_keys = [setting_key(s) for s in self.settings]

    @classmethod
    def from_grid(cls, replicate, grid, **kwargs):
        """A study over the Cartesian product of a grid (or of several grids).

        Parameters
        ----------
        replicate : callable
            As in :class:`Study`.
        grid : dict or list of dict
            ``{name: list of values}``; the settings are the product, in the
            grid's key order with the last key varying fastest. A list of
            grids gives the union of their products, in order.
        **kwargs
            ``n_replications``, ``root_seed``, ``path``, as in :class:`Study`.

        Returns
        -------
        study : Study

        Examples
        --------
        >>> def replicate(setting, rng):
        ...     return {"x": float(rng.normal())}
        >>> study = Study.from_grid(replicate, {"a": [1, 2], "b": ["u", "v"]},
        ...                         n_replications=3)
        >>> study.settings
        [{'a': 1, 'b': 'u'}, {'a': 1, 'b': 'v'}, {'a': 2, 'b': 'u'}, {'a': 2, 'b': 'v'}]
        """
        grids = [grid] if isinstance(grid, Mapping) else grid
        if not isinstance(grids, Sequence) or not grids:
            raise TypeError("grid must be a dict of lists or a non-empty list of such dicts")
        settings = []
        for g, one in enumerate(grids):
            if not isinstance(one, Mapping):
                raise TypeError(f"grid[{g}] must be a dict, got {type(one).__name__}")
            names, values = list(one), []
            for name in names:
                v = one[name]
                if isinstance(v, (str, bytes, Mapping)) or not hasattr(v, "__iter__"):
                    raise TypeError(
                        f"grid value for {name!r} must be a list of values, got "
                        f"{type(v).__name__} (wrap a single value in a list)"
                    )
                v = list(v)
                if not v:
                    raise ValueError(f"grid value for {name!r} is empty")
                values.append(v)
            settings.extend(
                dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)
            )
        return cls(replicate, settings, **kwargs)

    def __repr__(self):
        return (
            f"Study({_callable_name(self.replicate)}, {len(self.settings)} settings, "
            f"n_replications={self.n_replications}, root_seed={self.root_seed!r}, "
            f"path={self.path!r})"
        )

    @property
    def n_tasks(self) -> int:
        """Number of (setting, replication) pairs."""
        return len(self.settings) * self.n_replications

    def rng(self, setting_id: int, replication: int):
        """The generator that replication ``replication`` of setting ``setting_id`` receives.

        For debugging one replication by hand:
        ``study.replicate(study.settings[s], study.rng(s, r))`` reproduces it.
        """
        from ._seeding import replication_rng

        if not 0 <= replication < self.n_replications:
            raise ValueError(
                f"replication must be in [0, {self.n_replications}), got {replication}"
            )
        return replication_rng(self.root_seed, self.setting_keys[setting_id], replication)

    # ------------------------------------------------------------------ file

    def _header(self):
        return make_header(
            seeding=SEEDING_SCHEME,
            root_seed=self.root_seed,
            n_replications=self.n_replications,
            replicate_name=_callable_name(self.replicate),
            settings=self.settings,
        )

    def _open_results(self, *, overwrite, extend):
        """Create or check the results file; return the finished replications found."""
        if self.path is None:
            return {}
        header = self._header()
        if overwrite:
            write_new_file(self.path, header)
            return {}
        old, done = read_results_file(self.path, repair=True)
        if old is None:
            write_new_file(self.path, header)
            return {}
        problems = []
        old_root = old["root_seed"]
        old_root = tuple(old_root) if isinstance(old_root, list) else old_root
        if old.get("seeding") != SEEDING_SCHEME:
            problems.append(f"seeding scheme {old.get('seeding')!r} != {SEEDING_SCHEME!r}")
        if old_root != self.root_seed:
            problems.append(f"root_seed {old_root!r} != {self.root_seed!r}")
        fatal = bool(problems)
        if old["n_replications"] != self.n_replications:
            problems.append(f"n_replications {old['n_replications']} != {self.n_replications}")
        old_set = {canonical_json(s) for s in old["settings"]}
        new_set = {canonical_json(s) for s in self.settings}
        if old_set != new_set:
            problems.append(
                f"settings differ ({len(old_set - new_set)} only in the file, "
                f"{len(new_set - old_set)} only in this study)"
            )
        if problems and (fatal or not extend):
            hint = (
                "use another path, or overwrite=True to start again"
                if fatal
                else "use another path, overwrite=True to start again, or extend=True to "
                "keep the file's replications and run the missing ones"
            )
            raise ValueError(
                f"the results file {os.fspath(self.path)!r} was written by a different "
                f"study: {'; '.join(problems)}. To resume, build the Study exactly as "
                f"before; otherwise {hint}."
            )
        if problems:  # extend: the new header describes the study the file now serves
            old_settings = [s for s in old["settings"] if canonical_json(s) not in new_set]
            header["settings"] = self.settings + old_settings
            header["n_replications"] = max(self.n_replications, old["n_replications"])
            lines = [
                _dumps({"setting": k, "replication": r, "records": recs})
                for (k, r), recs in done.items()
            ]
            write_new_file(self.path, header, lines)
        return done

    # ------------------------------------------------------------------- run

    def run(
        self,
        *,
        n_jobs=None,
        backend=None,
        progress=True,
        client=None,
        inner_threads=1,
        output="frame",
        overwrite=False,
        extend=False,
        on_error="raise",
    ):
        """Run the missing replications and return every finished one.

        Parameters
        ----------
        n_jobs : int, optional
            Parallel jobs, as in joblib (``-1``: all CPUs or all dask
            workers; a local count is capped at the CPUs available).
            ``None``: joblib's default (1, or the active
            ``joblib.parallel_config``; every worker for "dask").
        backend : {"loky", "threading", "sequential", "dask"} or str or object, optional
            A joblib backend name (also any registered one, e.g. "ray" after
            ``ray.util.joblib.register_ray()``), or an object with a
            ``map(fn, iterable)`` method (e.g. a ``concurrent.futures``
            executor) whose results come back in order. ``None`` uses the
            active ``joblib.parallel_config`` (default: loky), or "dask" when
            ``client`` is given. "dask" runs on a ``distributed.Client``:
            ``client``, else the current one.
        progress : bool, default=True
            Show a tqdm progress bar (on stderr) over the replications.
        client : distributed.Client, optional
            The dask client for ``backend="dask"``.
        inner_threads : int or None, default=1
            When the replications run in parallel, cap the BLAS/OpenMP thread
            pools (threadpoolctl) and Numba's threads inside each replication
            at this number, to avoid oversubscription. ``None`` leaves them.
        output : {"frame", "records"}, default="frame"
            Return a ``pandas.DataFrame`` or a list of dicts (no pandas needed).
        overwrite : bool, default=False
            Discard the results file's content and start again.
        extend : bool, default=False
            Resume from a file written with the same ``root_seed`` but other
            settings or ``n_replications``: its replications that belong to
            this study are kept (their seeds do not depend on the rest), the
            missing ones run, and the file's header is updated.
        on_error : {"raise", "continue"}, default="raise"
            On the first failed replication, stop (``"raise"``), or run all the
            others and raise one :class:`ReplicationError` at the end
            (``"continue"``; its ``failures`` lists every error and its
            ``results`` holds the finished records). Failed replications are
            not written, so a rerun retries them.

        Returns
        -------
        results : pandas.DataFrame or list of dict
            One row per record, ordered by setting, replication and record:
            the setting's keys, ``setting_id`` (position in :attr:`settings`),
            ``replication``, then the record's keys.

        Raises
        ------
        ReplicationError
            If ``replicate`` raises; names the setting and the replication.
            Replications finished before it stay in the file.
        TypeError
            If ``replicate`` returns something else than a dict or a list of
            dicts of JSON-ready values.
        ValueError
            If the results file belongs to a different study, or a record
            reuses a setting key or a reserved column name.
        ImportError
            For ``backend="dask"`` without dask installed (extra ``dask``), or
            ``output="frame"`` without pandas.
        """
        if output not in _OUTPUTS:
            raise ValueError(f"output must be one of {_OUTPUTS}, got {output!r}")
        if on_error not in ("raise", "continue"):
            raise ValueError(f"on_error must be 'raise' or 'continue', got {on_error!r}")
        if inner_threads is not None and (
            isinstance(inner_threads, bool)
            or not isinstance(inner_threads, numbers.Integral)
            or inner_threads < 1
        ):
            raise ValueError(f"inner_threads must be an int >= 1 or None, got {inner_threads!r}")
        if n_jobs is not None and (
            isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0
        ):
            raise ValueError(f"n_jobs must be a non-zero int or None, got {n_jobs!r}")
        if output == "frame":
            _import_pandas("Study.run(output='frame')")
        backend, mapper = self._resolve_backend(backend, client)
        if n_jobs is not None and backend != "dask" and mapper is None:
            # local workers: never more than the CPUs (dask's -1 means its workers)
            n_jobs = effective_n_jobs(n_jobs)
        if backend == "dask":
            distributed = _import_distributed()
            if client is None:
                try:
                    client = distributed.get_client()
                except ValueError as exc:
                    raise ValueError(
                        "backend='dask' needs a dask.distributed Client: pass client=, or "
                        "create one first, e.g. Client(LocalCluster(n_workers=2, "
                        "threads_per_worker=1))"
                    ) from exc

        done = self._open_results(overwrite=overwrite, extend=extend)
        key_hex = [f"{k:016x}" for k in self.setting_keys]
        texts = [_dumps(s) for s in self.settings]
        # Replication-major order: an interrupted study has every setting at
        # a similar number of replications.
        todo = [
            (i, r)
            for r in range(self.n_replications)
            for i in range(len(self.settings))
            if (key_hex[i], r) not in done
        ]
        by_key = {k: i for i, k in enumerate(self.setting_keys)}
        wanted = set(key_hex)
        results = {
            pair: recs
            for pair, recs in done.items()
            if pair[0] in wanted and pair[1] < self.n_replications
        }

        def calls(threads):
            pid = os.getpid()
            for i, r in todo:
                key = self.setting_keys[i]
                yield (self.replicate, texts[i], key, r, self.root_seed, threads, pid)

        from tqdm.auto import tqdm

        writer = ResultsWriter(self.path) if (self.path is not None and todo) else None
        bar = tqdm(
            total=self.n_tasks,
            initial=self.n_tasks - len(todo),
            disable=not progress,
            desc=_callable_name(self.replicate).rsplit(".", 1)[-1],
            unit="rep",
            dynamic_ncols=True,
        )
        with contextlib.ExitStack() as stack:
            stack.callback(bar.close)
            if writer is not None:
                stack.callback(writer.close)
            stream = self._execute(calls, backend, mapper, n_jobs, client, inner_threads, stack)
            failures = []
            for status, key, r, payload, extra in stream:
                i = by_key[key]
                if status != "ok":
                    error = self._failure(status, i, r, payload, extra)
                    if on_error == "raise":
                        raise error from payload
                    failures.append((error, payload))
                    continue
                line, records = payload
                if writer is not None:
                    writer.write_line(line)
                results[(key_hex[i], r)] = records
                bar.update()
            if failures:
                first, cause = failures[0]
                error = ReplicationError(
                    f"{len(failures)} of {len(todo)} replications failed; the others are in "
                    f"{'the results file and ' if writer else ''}the error's .results, and a "
                    f"rerun retries the failed ones. The first: {first}",
                    getattr(first, "setting_id", None),
                    getattr(first, "setting", None),
                    getattr(first, "replication", None),
                    failures=[f for f, _ in failures],
                )
                error.results = _rows(self.settings, self.n_replications, key_hex, results)
                raise error from cause
        rows = _rows(self.settings, self.n_replications, key_hex, results)
        return _output(rows, self.settings, output, "Study.run(output='frame')")

    def _failure(self, status, i, r, payload, extra):
        """The exception to raise for a failed replication (``payload`` is the cause)."""
        setting = self.settings[i]
        if status == "raised":
            tb = "" if payload.__traceback__ is not None else f"\n\n{extra.rstrip()}"
            return ReplicationError(
                f"replication {r} of setting {i} {setting} raised "
                f"{type(payload).__name__}: {payload}{tb}",
                i,
                setting,
                r,
            )
        error = type(payload)(f"replication {r} of setting {i} {setting}: {payload}")
        error.setting_id, error.setting, error.replication = i, setting, r
        return error

    @staticmethod
    def _resolve_backend(backend, client):
        if backend is None:
            return ("dask" if client is not None else None), None
        if isinstance(backend, str):
            if client is not None and backend != "dask":
                raise ValueError(f"client= is for backend='dask', got backend={backend!r}")
            if backend in _BACKENDS:
                return backend, None
            from joblib.parallel import BACKENDS, EXTERNAL_BACKENDS

            if backend == "multiprocessing":
                raise ValueError(
                    "backend='multiprocessing' cannot return results as they finish; "
                    "use 'loky' (joblib's default process backend)"
                )
            if backend in BACKENDS or backend in EXTERNAL_BACKENDS:
                return backend, None
            raise ValueError(
                f"backend must be one of {_BACKENDS}, another registered joblib backend, "
                f"or an object with a map(fn, iterable) method; got {backend!r}"
            )
        if callable(getattr(backend, "map", None)):
            if client is not None:
                raise ValueError("client= is for backend='dask', not for a map object")
            return None, backend
        raise TypeError(
            f"backend must be a joblib backend name or an object with a map method, got "
            f"{type(backend).__name__}"
        )

    @staticmethod
    def _execute(calls, backend, mapper, n_jobs, client, inner_threads, stack):
        """Yield worker results as they finish (in order for a map object).

        ``calls(threads)`` yields the workers' arguments; ``threads`` is
        ``inner_threads`` when the replications run in parallel, else None.
        """
        if mapper is not None:
            if inner_threads is not None:
                stack.enter_context(thread_limits(inner_threads, blas=True))
            yield from mapper.map(_star_run, calls(inner_threads))
            return
        from joblib import Parallel, delayed, effective_n_jobs, parallel_config

        config = {"client": client} if backend == "dask" else {}
        if backend is not None:
            config["backend"] = backend
        if n_jobs is not None:
            config["n_jobs"] = n_jobs
        if config:
            stack.enter_context(parallel_config(**config))
        parallel = Parallel(return_as="generator_unordered")
        if backend != "dask" and effective_n_jobs(n_jobs) == 1:
            inner_threads = None  # nothing runs beside a replication: leave its threads
        if inner_threads is not None:
            # Threads of this process (threading backend, dask in-process
            # workers) share its BLAS pools: cap them here, for the whole run.
            stack.enter_context(thread_limits(inner_threads, blas=True))
        gen = parallel(delayed(run_replication)(*c) for c in calls(inner_threads))
        stack.callback(_close_quietly, gen)
        yield from gen


def _close_quietly(gen):
    """Close a joblib generator early (after an error) without its cancellation warning."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*adjusting the input task iterator")
        gen.close()


def _star_run(args):
    return run_replication(*args)
