"""The one progress rule: log lines and tqdm bars on stderr, driven by ``verbose``."""

import pytest

from mvlearn_ext.utils._progress import VerboseMixin, log_message, progress_bar


class _Fit(VerboseMixin):
    def __init__(self, verbose=0):
        self.verbose = verbose

    def fit(self):
        total = 0
        for i in self._progress(range(5), desc="sweep", unit="step"):
            total += i
        self._log("stage done")
        self._log("per-iteration detail", level=2)
        return total


@pytest.mark.parametrize("verbose", [0, False])
def test_silent_when_not_verbose(verbose, capsys):
    assert _Fit(verbose).fit() == 10
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_verbose_one_logs_stages_to_stderr_with_the_class_name(capsys):
    assert _Fit(1).fit() == 10
    out, err = capsys.readouterr()
    assert out == ""
    assert "[_Fit] stage done" in err
    assert "per-iteration detail" not in err
    assert "_Fit sweep" in err  # the bar's label


def test_verbose_two_adds_the_detail_lines(capsys):
    _Fit(2).fit()
    assert "[_Fit] per-iteration detail" in capsys.readouterr().err


def test_subclass_reports_as_itself(capsys):
    class Child(_Fit):
        pass

    Child(1).fit()
    assert "[Child] stage done" in capsys.readouterr().err


def test_log_message_and_disabled_bar(capsys):
    log_message("X", "hello", verbose=0)
    bar = progress_bar(verbose=0, desc="X", total=3)
    bar.update(3)
    bar.close()
    assert list(progress_bar(iter("abc"), verbose=0, desc="X")) == ["a", "b", "c"]
    out, err = capsys.readouterr()
    assert out == "" and err == ""
    log_message("X", "hello", verbose=3, level=3)
    assert capsys.readouterr().err == "[X] hello\n"
