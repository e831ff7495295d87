//! **Layer 1, memory**: the bytes and their layout, with no notion of peers. Where each part of
//! the symmetric heap lies ([`layout`]) and of the team segment ([`segment`]), the words that
//! peers update ([`word`]), the heap's allocator ([`allocator`]), the copy engine of the direct
//! path ([`copy`]), shared memory private to the user ([`private_shm`]) and a C program's data
//! segment made symmetric ([`dataseg`]).
//!
//! May use: the base modules (`element`, `error`, `config`, `complex`) and nothing else of the
//! crate. Everything above uses it.

pub(crate) mod allocator;
pub(crate) mod copy;
pub(crate) mod dataseg;
pub(crate) mod layout;
pub(crate) mod private_shm;
pub(crate) mod segment;
pub(crate) mod word;
