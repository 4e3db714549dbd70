//! The few distributions honest intervals need: the normal quantile, Student's t (CDF and quantile,
//! through the regularised incomplete beta function), Wilson's score interval and Holm's step-down
//! adjustment. Checked against scipy / statsmodels in `tests/results/test_result_model_properties.py`.

/// The standard normal quantile (Wichura's AS 241, relative error about 1e-16). `p` in (0, 1).
pub fn normal_quantile(p: f64) -> f64 {
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180_625 - q * q;
        return q * poly(&A, r) / poly(&B, r);
    }
    let r = if q < 0.0 { p } else { 1.0 - p };
    let r = (-r.ln()).sqrt();
    let value = if r <= 5.0 {
        let r = r - 1.6;
        poly(&C, r) / poly(&D, r)
    } else {
        let r = r - 5.0;
        poly(&E, r) / poly(&F, r)
    };
    if q < 0.0 {
        -value
    } else {
        value
    }
}

fn poly(coefficients: &[f64], x: f64) -> f64 {
    coefficients.iter().rev().fold(0.0, |acc, c| acc * x + c)
}

#[allow(clippy::excessive_precision)] // AS 241's published digits
const A: [f64; 8] = [
    3.387_132_872_796_366_5,
    133.141_667_891_784_38,
    1_971.590_950_306_551_3,
    13_731.693_765_509_461,
    45_921.953_931_549_87,
    67_265.770_927_008_7,
    33_430.575_583_588_13,
    2_509.080_928_730_122_7,
];
#[allow(clippy::excessive_precision)]
const B: [f64; 8] = [
    1.0,
    42.313_330_701_600_91,
    687.187_007_492_057_9,
    5_394.196_021_424_751,
    21_213.794_301_586_597,
    39_307.895_800_092_71,
    28_729.085_735_721_943,
    5_226.495_278_852_545,
];
#[allow(clippy::excessive_precision)]
const C: [f64; 8] = [
    1.423_437_110_749_683_5,
    4.630_337_846_156_546,
    5.769_497_221_460_691,
    3.647_848_324_763_204_5,
    1.270_458_252_452_368_4,
    0.241_780_725_177_450_6,
    0.022_723_844_989_269_184,
    7.745_450_142_783_414e-4,
];
#[allow(clippy::excessive_precision)]
const D: [f64; 8] = [
    1.0,
    2.053_191_626_637_759,
    1.676_384_830_183_803_8,
    0.689_767_334_985_1,
    0.148_103_976_427_480_08,
    0.015_198_666_563_616_457,
    5.475_938_084_995_345e-4,
    1.050_750_071_644_416_9e-9,
];
#[allow(clippy::excessive_precision)]
const E: [f64; 8] = [
    6.657_904_643_501_103,
    5.463_784_911_164_114,
    1.784_826_539_917_291_3,
    0.296_560_571_828_504_9,
    0.026_532_189_526_576_124,
    0.001_242_660_947_388_078_4,
    2.711_555_568_743_487_6e-5,
    2.010_334_399_292_288_1e-7,
];
#[allow(clippy::excessive_precision)]
const F: [f64; 8] = [
    1.0,
    0.599_832_206_555_888,
    0.136_929_880_922_735_8,
    0.014_875_361_290_850_615,
    7.868_691_311_456_133e-4,
    1.846_318_317_510_054_8e-5,
    1.421_511_758_316_446e-7,
    2.044_263_103_389_939_8e-15,
];

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, n = 9: about 15 significant digits).
fn ln_gamma(x: f64) -> f64 {
    #[allow(clippy::excessive_precision)]
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        sum += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    d = if d.abs() < TINY { TINY } else { d };
    d = 1.0 / d;
    let mut h = d;
    for m in 1..10_000 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        for numerator in [
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ] {
            d = 1.0 + numerator * d;
            d = if d.abs() < TINY { TINY } else { d };
            c = 1.0 + numerator / c;
            c = if c.abs() < TINY { TINY } else { c };
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// The regularised incomplete beta function `I_x(a, b)`.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The upper tail `P(T > t)` of Student's t with `df` degrees of freedom, for `t >= 0`. Near 0 it is
/// 1/2 less the centre's mass: `df / (df + t²)` rounds to 1 below t ≈ 1e-8, so the usual form could
/// not tell those t apart (a quantile just above 1/2 came out as 1e-8).
fn t_upper_tail(t: f64, df: f64) -> f64 {
    let t2 = t * t;
    if t2 < df {
        0.5 - 0.5 * incomplete_beta(0.5, df / 2.0, t2 / (df + t2))
    } else {
        0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t2))
    }
}

/// The two-sided p-value of a t statistic: `P(|T| >= |t|)`.
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return f64::NAN;
    }
    (2.0 * t_upper_tail(t.abs(), df)).min(1.0)
}

/// Student's t quantile: the `t` with `P(T <= t) = p`, `p` in (0, 1), `df > 0`.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p == 0.5 {
        return 0.0;
    }
    let upper = if p > 0.5 { 1.0 - p } else { p };
    // Bracket the upper-tail root, then bisect: the tail is monotone, so this cannot miss.
    let (mut lo, mut hi) = (0.0f64, normal_quantile(1.0 - upper).max(1.0));
    while t_upper_tail(hi, df) > upper {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_upper_tail(mid, df) > upper {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-15 * hi.max(1.0) {
            break;
        }
    }
    let t = 0.5 * (lo + hi);
    if p > 0.5 {
        t
    } else {
        -t
    }
}

/// Wilson's score interval `(low, high)` for a proportion `p` over `n` (possibly effective, not whole)
/// trials, at the normal quantile `z`. `n > 0`.
pub fn wilson(p: f64, n: f64, z: f64) -> (f64, f64) {
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).max(0.0).sqrt() / denominator;
    // At p = 0 or 1 one bound is exactly the boundary; rounding must not move it off.
    let low = if p <= 0.0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let high = if p >= 1.0 {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (low, high)
}

/// Holm's step-down adjusted p-values, in the order given (each capped at 1, monotone in rank).
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        let value = ((m - rank) as f64 * p_values[i]).min(1.0);
        running = running.max(value);
        adjusted[i] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance * b.abs().max(1.0)
    }

    #[test]
    fn normal_quantile_known_values() {
        assert!(close(normal_quantile(0.975), 1.959_963_984_540_054, 1e-15));
        assert!(close(normal_quantile(0.5), 0.0, 1e-15));
        assert!(close(normal_quantile(1e-10), -6.361_340_902_404_056, 1e-14));
    }

    #[test]
    fn t_quantile_known_values() {
        // scipy.stats.t.ppf(0.975, df) for df = 1, 4, 30.
        assert!(close(t_quantile(0.975, 1.0), 12.706_204_736_174_698, 1e-12));
        assert!(close(
            t_quantile(0.975, 4.0),
            2.776_445_105_197_798_7,
            1e-12
        ));
        assert!(close(
            t_quantile(0.025, 30.0),
            -2.042_272_456_301_238,
            1e-12
        ));
        assert!(close(
            t_two_sided_p(2.776_445_105_197_798_7, 4.0),
            0.05,
            1e-12
        ));
    }

    #[test]
    fn wilson_known_values() {
        let z = normal_quantile(0.975);
        let (low, high) = wilson(1.0, 5.0, z);
        assert!(close(low, 0.565_517_535_216_825_4, 1e-12) && high == 1.0);
        let (low, high) = wilson(0.1, 10.0, z);
        assert!(close(low, 0.017_876_213_095_072_896, 1e-12));
        assert!(close(high, 0.404_150_026_795_238_37, 1e-12));
    }

    #[test]
    fn holm_steps_down() {
        assert_eq!(holm(&[0.01, 0.04, 0.03]), vec![0.03, 0.06, 0.06]);
        assert_eq!(holm(&[0.5, 0.9]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }
}
