//! Exact sums whose rounded result does not depend on the order of the values: the same log read in
//! completion order (a Ray run) or row order (a local run) gives the same mean and variance to the bit.

/// The exact sum of the values added, kept as non-overlapping partials (Shewchuk); [`Self::total`]
/// is that exact sum rounded once, so it is the same for any order of the same values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExactSum {
    partials: Vec<f64>,
}

impl ExactSum {
    pub(crate) fn add(&mut self, value: f64) {
        let mut x = value;
        let mut kept = 0;
        for j in 0..self.partials.len() {
            let mut y = self.partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                self.partials[kept] = lo;
                kept += 1;
            }
            x = hi;
        }
        self.partials.truncate(kept);
        self.partials.push(x);
    }

    /// Adds `a * b` exactly (the product and its rounding error, by a fused multiply-add).
    pub(crate) fn add_product(&mut self, a: f64, b: f64) {
        let product = a * b;
        self.add(product);
        self.add(a.mul_add(b, -product));
    }

    /// Adds `factor` times every partial of `other`, exactly.
    pub(crate) fn add_scaled(&mut self, other: &ExactSum, factor: f64) {
        for &p in &other.partials {
            self.add_product(p, factor);
        }
    }

    /// The exact sum, correctly rounded (round half to even, as `math.fsum`).
    pub(crate) fn total(&self) -> f64 {
        let p = &self.partials;
        let Some(mut n) = p.len().checked_sub(1) else {
            return 0.0;
        };
        let mut hi = p[n];
        let mut lo = 0.0;
        while n > 0 {
            let x = hi;
            n -= 1;
            let y = p[n];
            hi = x + y;
            lo = y - (hi - x);
            if lo != 0.0 {
                break;
            }
        }
        // A half-way case decided by the partials below: round away from it, as exact rounding does.
        if n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0)) {
            let y = lo * 2.0;
            let x = hi + y;
            if y == x - hi {
                hi = x;
            }
        }
        hi
    }
}

/// `count · Σx² − (Σx)²`, exactly, then rounded once: the numerator of the variance without the
/// cancellation of the textbook formula and without the order dependence of a running update.
pub(crate) fn squared_deviation_numerator(sum: &ExactSum, sum_sq: &ExactSum, count: u64) -> f64 {
    let mut exact = ExactSum::default();
    exact.add_scaled(sum_sq, count as f64);
    for &a in &sum.partials {
        exact.add_scaled(sum, -a);
    }
    exact.total().max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum_of(values: &[f64]) -> ExactSum {
        let mut s = ExactSum::default();
        values.iter().for_each(|&v| s.add(v));
        s
    }

    #[test]
    fn the_total_is_the_same_in_any_order() {
        let values = [0.1, 0.2, 0.3, 1e16, -1e16, 0.7, 0.25, 1e-9];
        let mut reversed = values;
        reversed.reverse();
        assert_eq!(sum_of(&values).total(), sum_of(&reversed).total());
        assert_eq!(sum_of(&[1e100, 1.0, -1e100]).total(), 1.0);
        assert_eq!(sum_of(&[0.1; 10]).total(), 1.0);
    }

    #[test]
    fn the_numerator_of_a_constant_is_zero_and_exact_otherwise() {
        let xs = [0.1; 7];
        let mut sq = ExactSum::default();
        xs.iter().for_each(|&x| sq.add_product(x, x));
        assert_eq!(squared_deviation_numerator(&sum_of(&xs), &sq, 7), 0.0);
        // 1e9 + {0, 1, 2}: n·Σx² − (Σx)² = 3·5 + ... = 6 exactly (textbook doubles lose it entirely).
        let xs = [1e9, 1e9 + 1.0, 1e9 + 2.0];
        let mut sq = ExactSum::default();
        xs.iter().for_each(|&x| sq.add_product(x, x));
        assert_eq!(squared_deviation_numerator(&sum_of(&xs), &sq, 3), 6.0);
    }
}
