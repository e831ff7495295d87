"""Placeholder: the symmetric data objects (filled in by the sdo module)."""

SymmetricArray = None


def sdo(dtype, shape):
    """Allocate a symmetric data object (not yet implemented)."""
    raise NotImplementedError

