"""A re-layout must also pay on queries its target was not fitted to.

The partial re-layout's rule (``planner.advice.relayout_plan``) re-cuts what gains more than c × the rows
it rewrites *on the window the target was advised for*. That gain is measured in-sample: the target
is the layout that fits those very queries best, so where the window is noise (ad-hoc ranges on a
random column) the gain it shows is larger than the one it delivers on the queries that follow.

So before acting, the same action is judged out of sample, by two-fold cross-validation over the
window: split its queries in two halves (every other query, so both halves see the same phases of
a drift), advise a layout on each half, and cost the action toward it on the *other* half:

    held-out gain = Σ_k [cost_k(current) − cost_k(current after the action toward T_¬k)]
    act   iff   held-out gain > c × rows rewritten

(``T_¬k``: the layout advised on the half other than k; the action is the same one the window's
rule chose: the whole table laid out as the target, or the same partitions re-cut into its pieces).
The halves together hold every query of the window once, so the two gains are on the same scale.

Example: a window that is mostly ad-hoc ranges. Laying out the whole table as the window's best
gains the window more than c × the table's rows, but fitted on one half and judged on the other the
same switch gains less than that, so it is declined. What the check saves and costs over a whole
drift: ``benchmarks/results/drift.md``.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

from planner.advice.relayout_plan import RelayoutPlan, as_target, model_for, relaid
from planner.costmodel.cost import CostModel
from planner.model.layout import Layout
from planner.workload import Workload

# (the cost model of one half of the window, the layout advised on the other half)
Judged = Sequence[tuple[CostModel, Layout]]
MIN_QUERIES = 4  # fewer queries than this make halves of one query: nothing to validate on


def halves(workload: Workload) -> tuple[Workload, Workload]:
    """Every other query of ``workload``, from the first and from the second."""
    return replace(workload, queries=workload.queries[0::2]), replace(workload, queries=workload.queries[1::2])


def judged_halves(workload: Workload, model_of: Callable[[Workload], CostModel],
                  fitted_on: Callable[[Workload, CostModel], Layout]) -> list[tuple[CostModel, Layout]]:
    """Each half's cost model with the layout ``fitted_on`` the other half."""
    a, b = halves(workload)
    models = model_of(a), model_of(b)
    return [(models[0], fitted_on(b, models[1])), (models[1], fitted_on(a, models[0]))]


def held_out_net(plan: RelayoutPlan, judged: Judged) -> float:
    """What ``plan``'s action gains on each half toward the layout fitted on the other, summed,
    less c × the rows it rewrites."""
    gain = 0.0
    for model, fitted in judged:
        if plan.whole:
            after = as_target(plan.current, fitted)[0]
        else:
            after = relaid(plan.current, fitted, plan.chosen)[0]
        model = model_for(model, plan.current, after)
        gain += model.evaluate(plan.current).total - model.evaluate(after).total
    return gain - plan.write_cost * plan.rows_rewritten


def validated(plan: RelayoutPlan, judged: Judged) -> RelayoutPlan:
    """``plan`` with its held-out net when that is positive; otherwise no action, the declined
    plan kept for the report. A plan that rewrites nothing is returned as it is."""
    if not plan.chosen:
        return plan
    net = held_out_net(plan, judged)
    if net > 0:
        return replace(plan, held_out_net=net)
    return replace(plan, layout=plan.current, chosen=(), new_ids=(), whole_gain=None, held_out_net=net,
                   declined=plan)


__all__ = ["MIN_QUERIES", "Judged", "halves", "held_out_net", "judged_halves", "validated"]
