//! What an answer holds of the process's memory budget until it is written: from the moment the
//! session hands a large message over until hyper drops the last of its bytes (written, or abandoned
//! with their connection at the write timeout, `server`), they count in the application's
//! [`bb_drive::Room`] (its [`bb_drive::Process`]'s, which the sessions' drivers were given), so clients
//! that read nothing cannot make bb hold more than the budget for them.

use std::sync::Arc;

use hyper::body::Bytes;

/// Messages at least this large are held against the memory budget until written; smaller ones cost
/// less than the lock would (a tool list, a card's answer), and the connection cap bounds them.
pub(crate) const CHARGED_FROM: usize = 64 * 1024;

/// A message's bytes for the wire, held against `room` (the memory budget) until they are dropped.
pub(crate) fn charged(message: Vec<u8>, room: &Arc<bb_drive::Room>) -> Bytes {
    if message.len() < CHARGED_FROM {
        return Bytes::from(message);
    }
    let unsent = room.hold(message.len() as u64);
    Bytes::from_owner(Charged { message, _unsent: unsent })
}

/// A message and its hold on the memory budget, given back when hyper drops the last of its bytes.
struct Charged {
    message: Vec<u8>,
    _unsent: bb_drive::Unsent,
}

impl AsRef<[u8]> for Charged {
    fn as_ref(&self) -> &[u8] {
        &self.message
    }
}
