"""botocore's service models, loaded once on first use.

They are the single source of truth for the wire format and input validation: every shape,
length, pattern and enum comes from here rather than being restated by hand. Loading the Glue
model parses ~1 MB of JSON, so it happens lazily (not at import: Lambda cold start).
"""

from __future__ import annotations

import functools

from botocore.loaders import create_loader
from botocore.model import OperationModel, ServiceModel

GLUE = "glue"
LAKEFORMATION = "lakeformation"


@functools.cache
def service_model(service: str) -> ServiceModel:
    """The botocore ServiceModel of ``glue`` or ``lakeformation``."""
    data = create_loader().load_service_model(service, "service-2")
    return ServiceModel(data, service_name=service)


@functools.cache
def operation_model(service: str, operation: str) -> OperationModel | None:
    """The OperationModel, or None when botocore does not know the operation."""
    model = service_model(service)
    if operation not in model.operation_names:
        return None
    return model.operation_model(operation)
