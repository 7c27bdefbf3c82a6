"""``as_bandit`` refuses an adaptive adversary with a TypeError that names it (its losses are no fixed environment)."""
import pytest

from jaxdp.bandits import as_bandit
from jaxdp.experts import adaptive_lazy_epochs, punish_last_action


@pytest.mark.parametrize("adv", [punish_last_action(3), adaptive_lazy_epochs(3)], ids=["punish_last", "epochs"])
def test_as_bandit_refuses_an_adaptive_adversary(adv):
    with pytest.raises(TypeError, match="AdaptiveAdversary"):
        as_bandit(adv)
