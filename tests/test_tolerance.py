"""The float32 tolerances of tests/tolerance.py: a difference of rounding passes, a real error fails."""

import numpy as np
import pytest
import torch

from tests.tolerance import EPS, assert_close, tolerance


def test_a_tolerance_is_eps_of_the_largest_finite_value_compared():
    assert tolerance([0.5, -20.0], [3.0], ulps=10) == pytest.approx(10 * EPS * 20)
    assert tolerance(torch.tensor([1.0, -torch.inf]), ulps=2) == pytest.approx(2 * EPS)  # a banned token's log p


def test_float32_rounding_passes_where_it_is_small_against_the_largest_value():
    rng = np.random.default_rng(0)
    values = rng.normal(size=400) * 10
    values[0] = 30.0
    summed_otherwise = (values.astype(np.float32) * np.float32(1 + 20 * EPS)).astype(np.float64)  # 20 eps off
    assert_close(summed_otherwise, values, ulps=32)
    small = values.copy()
    small[1] = 1e-6
    assert_close(small + 30 * 16 * EPS, small, ulps=32)  # relative to 30, not to the 1e-6 itself


@pytest.mark.parametrize("ulps", [32, 512, 2048])
def test_a_real_error_fails_at_every_tolerance_the_tests_use(ulps):
    """A value off by 0.1% of the largest one (a missed scale, a wrong position, a token left out do far more)."""
    values = np.linspace(-30, 30, 61)
    wrong = values.copy()
    wrong[7] += 1e-3 * 30
    with pytest.raises(AssertionError, match="eps of the largest value"):
        assert_close(wrong, values, ulps=ulps, what="perturbed")


def test_the_scale_of_a_difference_is_that_of_the_values_it_came_from():
    full, without = -12.0, -12.5
    assert_close(0.5 + 100 * 12 * EPS, full - without, ulps=128, scale=[full, without])
    with pytest.raises(AssertionError):
        assert_close(0.5 + 1e-3, full - without, ulps=128, scale=[full, without])


def test_values_that_are_not_finite_must_be_the_same_on_both_sides():
    assert_close([1.0, -np.inf], [1.0, -np.inf], ulps=1)
    with pytest.raises(AssertionError, match="not finite"):
        assert_close([1.0, -np.inf], [1.0, -5.0], ulps=1)
    with pytest.raises(AssertionError, match="shapes"):
        assert_close([1.0, 2.0], [1.0], ulps=1)
