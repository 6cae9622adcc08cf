"""The NES attack's query budget is a hard limit: no image spends more than it, the check after the
last step included, and an image the attack never fools spends as much of it as the rule allows."""

from __future__ import annotations

import pytest
import torch

from vlstress.errors import VlstressError
from vlstress.suites.adversarial import attacks as adv

pytest.importorskip("torchattacks")

N_CLASSES = 3

# (budget, samples): budgets that are a multiple of samples + 1 (the old overrun), one short of and
# one past such a multiple, the smallest budgets, and the params example (66 queries, 10 samples)
BUDGETS = [(22, 10), (66, 10), (67, 10), (65, 10), (11, 10), (12, 10), (9, 2), (7, 2), (50, 4)]


class Constant(torch.nn.Module):
    """Logits that do not depend on the image: class 0 always wins, so no step ever fools it."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3 * 4 * 4, N_CLASSES)
        with torch.no_grad():
            self.linear.weight.zero_()
            self.linear.bias.copy_(torch.tensor([5.0, 0.0, 0.0]))

    def forward(self, x):
        return self.linear(x.flatten(1))


@pytest.mark.parametrize(("budget", "samples"), BUDGETS)
def test_no_image_spends_more_than_its_budget(budget, samples):
    from vlstress.suites.adversarial.nes import attack_class

    attack = attack_class()(
        Constant(), eps=4 / 255, alpha=1 / 255, queries=budget, samples=samples, sigma=1e-3
    )
    images = torch.rand(4, 3, 4, 4, generator=torch.Generator().manual_seed(0))
    labels = torch.tensor([0, 0, 0, 1])  # the last is wrong before any step
    attack(images, labels)
    queries = attack.queries.tolist()
    assert max(queries) <= budget, (budget, samples, queries)
    assert queries[3] == 1  # already fooled: the first check stops it
    steps = (budget - 1) // (samples + 1)  # the first check, then each step with its check
    # never fooled: every step the budget allows, each paid with its samples and its check
    assert queries[:3] == [1 + steps * (samples + 1)] * 3, (budget, samples, queries)
    # ... and as much of the budget as the rule allows: one more step and its check would not fit
    assert budget - queries[0] < samples + 1
    # the step size is planned for the steps the attack takes
    spec = adv.AttackSpec(name="n", kind="nes", steps=budget, extra={"samples": samples})
    assert adv.nes_iterations(spec) == steps


def test_a_budget_without_room_for_a_step_and_its_check_is_refused():
    """One step needs the first check, its samples and the check after it: samples + 2 queries."""
    adv.check_spec(adv.AttackSpec(name="n", kind="nes", steps=12, extra={"samples": 10}))
    with pytest.raises(VlstressError, match="budget of 11 is less than one NES step.*12 queries"):
        adv.check_spec(adv.AttackSpec(name="n", kind="nes", steps=11, extra={"samples": 10}))
    from vlstress.suites.adversarial.nes import attack_class

    with pytest.raises(ValueError, match="query budget of at least 1"):
        attack_class()(Constant(), queries=0, samples=2)
