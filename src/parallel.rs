//! Splitting CPU-bound work over the machine's cores, keeping the input order.

use rayon::prelude::*;

/// `f` over `items` on every available core, results in input order.
pub fn map<I: Sync, T: Send>(items: &[I], f: impl Fn(&I) -> T + Sync + Send) -> Vec<T> {
    items.par_iter().map(f).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_order() {
        let items: Vec<usize> = (0..1000).collect();
        assert_eq!(
            super::map(&items, |i| i * 2),
            items.iter().map(|i| i * 2).collect::<Vec<_>>()
        );
    }
}
