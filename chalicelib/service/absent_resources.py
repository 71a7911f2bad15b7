"""Glue's resources this service never holds: jobs, triggers, workflows, development endpoints,
ML transforms, security configurations, interactive sessions, blueprints, data quality rulesets,
custom entity types, usage profiles.

Their listings answer what AWS answers for an account that has none (an empty list, no NextToken),
so that tools which list them on start (DataHub's Glue source calls GetJobs) carry on with the
catalog; the operations that would create one stay unknown (UnknownOperationException), so none
can ever exist and the empty answer is always true.
"""

from __future__ import annotations

# The kinds of resource, by the Glue operations that list them (docs and tests read this).
NEVER_HELD: dict[str, str] = {
    "GetJobs": "jobs", "ListJobs": "jobs",
    "GetTriggers": "triggers", "ListTriggers": "triggers",
    "ListWorkflows": "workflows",
    "GetDevEndpoints": "development endpoints", "ListDevEndpoints": "development endpoints",
    "GetMLTransforms": "ML transforms", "ListMLTransforms": "ML transforms",
    "GetSecurityConfigurations": "security configurations",
    "ListSessions": "interactive sessions",
    "ListBlueprints": "blueprints",
    "ListDataQualityRulesets": "data quality rulesets",
    "ListCustomEntityTypes": "custom entity types",
    "ListUsageProfiles": "usage profiles",
}


def list_never_held(operation: str) -> list[dict]:
    """The resources of the kind ``operation`` lists: none, ever (see the module docstring)."""
    if operation not in NEVER_HELD:
        raise KeyError(operation)
    return []
