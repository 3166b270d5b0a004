"""Pointwise losses: values from Table 1 of the LEML paper, derivatives vs finite differences."""

import numpy as np
import pytest

from mlx.numerics.losses import (
    LOSSES,
    LogisticLoss,
    SquaredHingeLoss,
    SquaredLoss,
    get_loss,
)

ALL = sorted(LOSSES)


def _points(loss, rng, n=200):
    y = loss.encode(rng.integers(0, 2, n))
    s = rng.normal(scale=2.0, size=n)
    if loss.name == "squared_hinge":                   # stay off the kink y s = 1
        s = np.where(np.abs(y * s - 1.0) < 1e-3, s + 0.01, s)
    return y, s


@pytest.mark.parametrize("name", ALL)
def test_first_derivative_matches_finite_differences(name):
    loss = get_loss(name)
    y, s = _points(loss, np.random.default_rng(0))
    eps = 1e-6
    fd = (loss.value(y, s + eps) - loss.value(y, s - eps)) / (2 * eps)
    np.testing.assert_allclose(loss.derivative(y, s), fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ALL)
def test_second_derivative_matches_finite_differences(name):
    loss = get_loss(name)
    y, s = _points(loss, np.random.default_rng(1))
    eps = 1e-6
    fd = (loss.derivative(y, s + eps) - loss.derivative(y, s - eps)) / (2 * eps)
    np.testing.assert_allclose(loss.second_derivative(y, s), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ALL)
def test_convex_nonnegative_and_shape_preserving(name):
    loss = get_loss(name)
    y, s = _points(loss, np.random.default_rng(2))
    for out in (loss.value(y, s), loss.derivative(y, s), loss.second_derivative(y, s)):
        assert out.shape == s.shape and np.isfinite(out).all()
    assert (loss.value(y, s) >= 0).all()
    assert (loss.second_derivative(y, s) >= 0).all()


def test_table_one_values():
    sq, lr, sh = SquaredLoss(), LogisticLoss(), SquaredHingeLoss()
    # squared: (a - b)^2 / 2, derivative b - a, second derivative 1
    assert sq.value(1.0, 3.0) == pytest.approx(2.0)
    assert sq.derivative(1.0, 3.0) == pytest.approx(2.0)
    assert sq.second_derivative(1.0, 3.0) == pytest.approx(1.0)
    # logistic: log(1 + e^{-ab}), -a / (1 + e^{ab}), a^2 e^{-ab} / (1 + e^{-ab})^2
    a, b = -1.0, 0.7
    assert lr.value(a, b) == pytest.approx(np.log1p(np.exp(-a * b)))
    assert lr.derivative(a, b) == pytest.approx(-a / (1 + np.exp(a * b)))
    assert lr.second_derivative(a, b) == pytest.approx(
        a * a * np.exp(-a * b) / (1 + np.exp(-a * b)) ** 2)
    # squared hinge: max(0, 1 - ab)^2, -2a max(0, 1 - ab), 2 [ab < 1]
    assert sh.value(1.0, 0.25) == pytest.approx(0.5625)
    assert sh.derivative(1.0, 0.25) == pytest.approx(-1.5)
    assert sh.second_derivative(1.0, 0.25) == pytest.approx(2.0)
    assert sh.value(1.0, 2.0) == 0.0 and sh.derivative(1.0, 2.0) == 0.0
    assert sh.second_derivative(1.0, 2.0) == 0.0


def test_logistic_is_stable_for_large_margins():
    lr = LogisticLoss()
    s = np.array([-1e4, -50.0, 0.0, 50.0, 1e4])
    y = np.ones_like(s)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        v = lr.value(y, s)
        g = lr.derivative(y, s)
        h = lr.second_derivative(y, s)
    assert v[0] == pytest.approx(1e4) and v[-1] == pytest.approx(0.0, abs=1e-300)
    assert np.isfinite(g).all() and np.isfinite(h).all()


def test_encoding_and_thresholds():
    labels = np.array([0, 1, 1, 0])
    np.testing.assert_array_equal(SquaredLoss().encode(labels), [0, 1, 1, 0])
    np.testing.assert_array_equal(LogisticLoss().encode(labels), [-1, 1, 1, -1])
    np.testing.assert_array_equal(SquaredHingeLoss().encode(labels), [-1, 1, 1, -1])
    assert SquaredLoss.threshold == 0.5
    assert LogisticLoss.threshold == 0.0 and SquaredHingeLoss.threshold == 0.0
    assert SquaredLoss.constant_curvature == 1.0 and LogisticLoss.constant_curvature is None


def test_unknown_loss_names_the_valid_ones():
    with pytest.raises(ValueError,
                       match="unknown loss 'hinge'; valid: logistic, squared, squared_hinge"):
        get_loss("hinge")
