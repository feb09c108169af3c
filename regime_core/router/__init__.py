"""The RegimeRouter: choose ``q`` or ``union`` per two-hop question, with no LLM and no oracle.

Pipeline (each step a pure function; files only in :mod:`~regime_core.router.io`):

1. :func:`select_b_rel` picks the bridge's relation sentence ``B_rel`` from surface cues;
2. :func:`extract_features` / :func:`featurize` compute the five features
   (:data:`FEATURE_NAMES`, defined in :data:`FEATURE_DOCS`);
3. :func:`outcome_labels` labels each training question from the retrieval outcomes of the
   ``q`` and ``union`` arms (self-supervised);
4. :class:`RegimeRouter` (a scikit-learn classifier) learns the rule, :func:`cross_fit_predict`
   scores every training item out of fold;
5. :func:`save_router` / :func:`load_router` store the deployed rule as validated JSON.

Around them, imported by their module path (they need retrieval, data and pandas, which
``regime route`` does without): :mod:`~regime_core.router.training` (routing data from retrieval
outcomes, the cross-fitted fit, the selector measured), :mod:`~regime_core.router.evaluation`
(routed hit@k against always-q, always-union and the oracle) and
:mod:`~regime_core.router.model` (the packaged router, routing one question given as text).
"""

from regime_core.router.estimator import (
    RegimeRouter,
    RouteDecision,
    cross_fit_folds,
    cross_fit_predict,
    router_logits,
)
from regime_core.router.features import (
    FEATURE_DOCS,
    FEATURE_NAMES,
    FEATURE_SPEC,
    FEATURE_SPEC_VERSION,
    Featurized,
    extract_features,
    feature_spec,
    featurize,
)
from regime_core.router.io import load_router, save_router
from regime_core.router.labels import (
    ACTIONS,
    EXCLUDED,
    TIE_RULES,
    describe_label_rule,
    outcome_labels,
    tie_mask,
)
from regime_core.router.rules import DEFAULT_ROUTER_RULES, RouterRules
from regime_core.router.selector import (
    SelectedSentence,
    select_b_rel,
    select_b_rel_batch,
    sentence_scores,
)

__all__ = [
    "ACTIONS",
    "DEFAULT_ROUTER_RULES",
    "EXCLUDED",
    "FEATURE_DOCS",
    "FEATURE_NAMES",
    "FEATURE_SPEC",
    "FEATURE_SPEC_VERSION",
    "TIE_RULES",
    "Featurized",
    "RegimeRouter",
    "RouteDecision",
    "RouterRules",
    "SelectedSentence",
    "cross_fit_folds",
    "cross_fit_predict",
    "describe_label_rule",
    "extract_features",
    "feature_spec",
    "featurize",
    "load_router",
    "outcome_labels",
    "router_logits",
    "save_router",
    "select_b_rel",
    "select_b_rel_batch",
    "sentence_scores",
    "tie_mask",
]
