"""LEML: properties the older tests left open (found by mutation testing)."""

import numpy as np
import scipy.sparse as sp

from mlx.methods.leml import LEML


def _problem(seed=0, n=30, d=5, L=6, mask=None):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.7))
    Y = sp.csr_matrix((rng.random((n, L)) < 0.35).astype(float))
    observed = None
    if mask is not None:
        observed = sp.csr_matrix((rng.random((n, L)) < mask).astype(float))
    return X, Y, observed


def test_closed_form_h_steps_record_no_inner_iterations():
    """``n_inner_iter_`` counts CG or TRON iterations, 0 for closed-form steps: the squared-loss
    H-step is closed-form with full and with missing labels alike."""
    X, Y, observed = _problem(5, mask=0.6)
    for mask in (None, observed):
        model = LEML(rank=2, l2_reg=0.3, max_iter=2, tol=0, w_solver="cg",
                     inner_max_iter=1).fit(X, Y, observed=mask)
        assert model.n_inner_iter_ == [(1, 0), (1, 0)]
    model = LEML(rank=2, l2_reg=0.3, loss="logistic", max_iter=2, tol=0,
                 inner_max_iter=1).fit(X, Y, observed=observed)
    assert model.n_inner_iter_ == [(1, 1), (1, 1)]
