//! McNemar's exact test on paired pass/fail outcomes: did two runs on the same rows differ?
//!
//! Only the discordant rows carry information: `b` rows passed in the first run and failed in the
//! second, `c` the reverse. Under the null hypothesis (no difference) each discordant row is a fair
//! coin, so `min(b, c)` follows Binomial(b + c, 1/2) and the two-sided exact p-value is
//! `min(1, 2 * P(X <= min(b, c)))`. The sum is done in log space so tables of millions of rows neither
//! overflow nor underflow to a wrong 0.

/// The outcome of McNemar's exact test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct McNemar {
    /// Rows that passed in the first run and failed in the second.
    pub first_only: u64,
    /// Rows that failed in the first run and passed in the second.
    pub second_only: u64,
    /// The two-sided exact p-value (1.0 without discordant rows).
    pub p_value: f64,
}

/// `ln(exp(a) + exp(b))` without overflow.
fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (lo - hi).exp().ln_1p()
}

/// McNemar's exact (binomial) two-sided test for `b` first-only and `c` second-only passes.
pub fn mcnemar_exact(b: u64, c: u64) -> McNemar {
    let n = b + c;
    let k = b.min(c);
    // With |b - c| <= 1 the lower tail holds at least half the mass, so p is exactly 1 (summing would give
    // 0.9999999999999998).
    let p_value = if b.abs_diff(c) <= 1 {
        1.0
    } else {
        // ln C(n, i) by the recurrence C(n, i+1) = C(n, i) (n - i) / (i + 1); terms are summed in log space.
        let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
        let mut ln_comb = 0.0f64;
        let mut ln_tail = f64::NEG_INFINITY;
        for i in 0..=k {
            ln_tail = log_add(ln_tail, ln_comb + ln_half_n);
            ln_comb += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
        }
        (2.0 * ln_tail.exp()).min(1.0)
    };
    McNemar {
        first_only: b,
        second_only: c,
        p_value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
    }

    #[test]
    fn known_tables() {
        // b=0, c=5: 2 * (1/2)^5 = 1/16.
        assert!(close(mcnemar_exact(0, 5).p_value, 0.0625));
        // b=1, c=9: 2 * (1 + 10) / 1024.
        assert!(close(mcnemar_exact(1, 9).p_value, 22.0 / 1024.0));
        assert!(close(mcnemar_exact(9, 1).p_value, 22.0 / 1024.0));
        // b=2, c=8: 2 * (1 + 10 + 45) / 1024 = 0.109375 (the textbook example).
        assert!(close(mcnemar_exact(2, 8).p_value, 0.109_375));
        assert_eq!(mcnemar_exact(0, 0).p_value, 1.0);
        assert_eq!(mcnemar_exact(7, 7).p_value, 1.0);
        // b=3, c=4: 2 * P(X <= 3) over 7 coins is above 1 before the cap.
        assert_eq!(mcnemar_exact(3, 4).p_value, 1.0);
    }

    #[test]
    fn huge_tables_stay_finite_and_ordered() {
        let p = mcnemar_exact(500_000, 501_000).p_value;
        assert!(p > 0.0 && p < 1.0, "{p}");
        let far = mcnemar_exact(400_000, 600_000).p_value;
        assert!((0.0..1e-100).contains(&far), "{far}");
        assert!(mcnemar_exact(10, 40).p_value < mcnemar_exact(20, 30).p_value);
    }
}
