"""Service exceptions, named exactly as AWS names them.

They are raised deep in the domain and store layers and mapped to the wire once, in each
protocol's wire (``chalicelib/protocol/<protocol>/wire.py``). ``code`` is what goes into ``__type`` /
``x-amzn-ErrorType``; botocore turns it into ``client.exceptions.<code>``.
"""

from __future__ import annotations


class ServiceError(Exception):
    """Base class: an error the client caused or is told about (HTTP 4xx unless overridden)."""

    code = "InternalServiceException"
    status = 400
    # The Paimon REST protocol names the resource an error is about (ErrorResponse's resourceType,
    # resourceName: "DATABASE", "TABLE", "COLUMN", ...); Glue and Lake Formation ignore both.
    resource_type: str | None = None
    resource_name: str | None = None

    def __init__(self, message: str, resource_type: str | None = None,
                 resource_name: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if resource_type is not None:
            self.resource_type = resource_type
        if resource_name is not None:
            self.resource_name = resource_name


class InvalidInputException(ServiceError):
    code = "InvalidInputException"


class EntityNotFoundException(ServiceError):
    code = "EntityNotFoundException"


class AlreadyExistsException(ServiceError):
    code = "AlreadyExistsException"


class ConcurrentModificationException(ServiceError):
    code = "ConcurrentModificationException"


class NamespaceNotEmptyException(ServiceError):
    """Iceberg REST's DropNamespace on a namespace that still holds tables or views (409; Glue's
    DeleteDatabase would delete them with it)."""

    code = "NamespaceNotEmptyException"
    status = 409


class ResourceNumberLimitExceededException(ServiceError):
    code = "ResourceNumberLimitExceededException"


class ConditionCheckFailureException(ServiceError):
    """A condition the request set on the stored state does not hold (PutResourcePolicy's
    PolicyExistsCondition / PolicyHashCondition, DeleteResourcePolicy's PolicyHashCondition)."""

    code = "ConditionCheckFailureException"


class AccessDeniedException(ServiceError):
    code = "AccessDeniedException"


class OperationTimeoutException(ServiceError):
    code = "OperationTimeoutException"


class AuthenticationError(ServiceError):
    """A request the SigV4 (or bearer token) check refused: nothing past authentication ran.

    AWS's front end answers these before any service code; the codes are AWS's own and botocore
    turns each into ``client.exceptions.<code>``. 403 as on Lake Formation's REST front end; the
    Glue wire answers them 400, as Glue's JSON 1.1 front end does (see protocol/glue/wire.py).
    """

    status = 403


class MissingAuthenticationTokenException(AuthenticationError):
    code = "MissingAuthenticationTokenException"


class UnrecognizedClientException(AuthenticationError):
    code = "UnrecognizedClientException"


class IncompleteSignatureException(AuthenticationError):
    code = "IncompleteSignatureException"


class SignatureDoesNotMatchException(AuthenticationError):
    """A signature that does not verify, one made too long ago, or a credential scoped to a
    region that does not exist (in the open mode too): AWS calls each InvalidSignatureException."""

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


# AWS's fixed messages (issue 12) -------------------------------------------------------------
# Clients match on these texts (Hive and Spark connectors look for "not found"), so each kind is
# worded once, here, as Glue words it; raise sites call these instead of spelling a message.
def database_not_found(name: str) -> EntityNotFoundException:
    """GetDatabase and every call naming a database that does not exist."""
    return EntityNotFoundException(f"Database {name} not found.")


def table_not_found(name: str) -> EntityNotFoundException:
    """Every call naming a table that does not exist (``name`` as folded by the catalog)."""
    return EntityNotFoundException(f"Table {name} not found.")


def partition_not_found() -> EntityNotFoundException:
    """GetPartition, UpdatePartition, DeletePartition (and their batch entries) on missing values."""
    return EntityNotFoundException("Cannot find partition.")


def table_version_not_found(version: str, table: str) -> EntityNotFoundException:
    """GetTableVersion / DeleteTableVersion on a version the table does not have."""
    return EntityNotFoundException(f"Version {version} of table {table} not found.")


def partition_index_not_found(name: str) -> EntityNotFoundException:
    """DeletePartitionIndex on an index the table does not have."""
    return EntityNotFoundException(f"Partition index {name} not found.")


def transaction_not_found(transaction_id: str) -> EntityNotFoundException:
    """Lake Formation calls naming a transaction that does not exist."""
    return EntityNotFoundException(f"Transaction {transaction_id} not found.")


def database_already_exists() -> AlreadyExistsException:
    """CreateDatabase on a taken name."""
    return AlreadyExistsException("Database already exists.")


def table_already_exists() -> AlreadyExistsException:
    """CreateTable on a taken name."""
    return AlreadyExistsException("Table already exists.")


def partition_already_exists() -> AlreadyExistsException:
    """CreatePartition (or UpdatePartition to new values) where the values are taken."""
    return AlreadyExistsException("Partition already exists.")


def partition_index_already_exists(name: str) -> AlreadyExistsException:
    """CreatePartitionIndex on a taken index name."""
    return AlreadyExistsException(f"Partition index {name} already exists")


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
