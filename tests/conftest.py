"""Test-suite configuration shared by every test module."""

import os

from hypothesis import HealthCheck, settings

# CI runs property tests derandomised, so a run is reproducible; locally they
# explore new examples each time. Select with HYPOTHESIS_PROFILE=ci|dev.
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")
)
