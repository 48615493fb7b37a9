//! State the clients of one step share across its workloads (a run and its roles build a
//! workload each): the first client makes it, the others take it while any holds it, and it
//! goes when the last client does, so that the next step starts from the database again.

use std::sync::{Arc, Mutex, Weak};

/// One kind of shared state, kept in a `static`.
pub(crate) struct Shared<T>(Mutex<Weak<T>>);

impl<T> Shared<T> {
    pub(crate) const fn new() -> Self {
        Shared(Mutex::new(Weak::new()))
    }

    /// The state alive in this process, or the one `make` gives (kept for the others).
    pub(crate) fn get_or_make<E>(&self, make: impl FnOnce() -> Result<T, E>) -> Result<Arc<T>, E> {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = kept.upgrade() {
            return Ok(t);
        }
        let made = Arc::new(make()?);
        *kept = Arc::downgrade(&made);
        Ok(made)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_is_shared_while_held_and_made_again_after() {
        static S: Shared<u32> = Shared::new();
        let a = S.get_or_make(|| Ok::<_, ()>(1)).unwrap();
        let b = S.get_or_make(|| Ok::<_, ()>(2)).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        drop((a, b));
        let c = S.get_or_make(|| Ok::<_, ()>(3)).unwrap();
        assert_eq!(*c, 3);
        assert_eq!(S.get_or_make(|| Err::<u32, _>("no")).map(|x| *x), Ok(3));
        drop(c);
        assert_eq!(S.get_or_make(|| Err::<u32, _>("no")).map(|x| *x), Err("no"));
    }
}
