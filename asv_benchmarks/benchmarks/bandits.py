"""Mean-estimation bandits: a Monte Carlo batch of allocation runs."""

from mvlearn_ext.bandits import GreedyPlugIn, UniformAllocation, simulate

POLICIES = {"GreedyPlugIn": lambda: GreedyPlugIn(p=2), "UniformAllocation": UniformAllocation}


class Simulate:
    params = list(POLICIES)
    param_names = ["policy"]

    def setup(self, name):
        self.sigma = [1.0, 2.0, 0.5, 3.0, 1.5]
        self._run(name)

    def _run(self, name):
        return simulate(POLICIES[name](), sigma=self.sigma, budget=4096, n_replications=200)

    def time_simulate(self, name):
        self._run(name)
