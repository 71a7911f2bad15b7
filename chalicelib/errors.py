"""Service exceptions, named exactly as AWS names them.

They are raised deep in the domain and store layers and mapped to the wire once, in
``chalicelib.protocol.wire``. ``code`` is what goes into ``__type`` / ``x-amzn-ErrorType``;
botocore turns it into ``client.exceptions.<code>``.
"""

from __future__ import annotations


class ServiceError(Exception):
    """Base class: an error the client caused or is told about (HTTP 4xx unless overridden)."""

    code = "InternalServiceException"
    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInputException(ServiceError):
    code = "InvalidInputException"


class EntityNotFoundException(ServiceError):
    code = "EntityNotFoundException"


class AlreadyExistsException(ServiceError):
    code = "AlreadyExistsException"


class ConcurrentModificationException(ServiceError):
    code = "ConcurrentModificationException"


class ResourceNumberLimitExceededException(ServiceError):
    code = "ResourceNumberLimitExceededException"


class AccessDeniedException(ServiceError):
    code = "AccessDeniedException"


class OperationTimeoutException(ServiceError):
    code = "OperationTimeoutException"


class InvalidSignatureException(ServiceError):
    """The SigV4 signature or its credential scope is unusable (AWS's front end answers a
    credential scoped to an invalid region with this code, HTTP 400 on the JSON protocols)."""

    code = "InvalidSignatureException"


class InternalServiceException(ServiceError):
    code = "InternalServiceException"
    status = 500


class SerializationException(ServiceError):
    """The body is not JSON (AWS answers malformed bodies with this code)."""

    code = "SerializationException"


class UnknownOperationException(ServiceError):
    """No such action on this endpoint (AWS answers an unknown X-Amz-Target with this code)."""

    code = "UnknownOperationException"


class RequestEntityTooLargeException(ServiceError):
    code = "RequestEntityTooLargeException"
    status = 413


# Lake Formation transaction errors (issue 5) --------------------------------------------------
class TransactionCommittedException(ServiceError):
    code = "TransactionCommittedException"


class TransactionCanceledException(ServiceError):
    code = "TransactionCanceledException"


class TransactionCommitInProgressException(ServiceError):
    code = "TransactionCommitInProgressException"


class ThrottlingException(ServiceError):
    """The store throttled a request and bounded retries did not get it through. AWS SDKs
    retry this code themselves (botocore's standard retry mode counts it as a throttle)."""

    code = "ThrottlingException"
