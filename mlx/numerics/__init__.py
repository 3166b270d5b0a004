"""Pure numerical routines: functions of arrays, no I/O, no logging, no config.

* :mod:`~mlx.numerics.ridge` -- ridge / PSD solves ``(A + l2_reg I) Z = B`` (Cholesky, else
  the minimum-norm solution from an eigendecomposition), primal or dual ridge regression;
* :mod:`~mlx.numerics.cg` -- conjugate gradient: one system of any shape (:func:`cg`) or
  independent per-column systems with per-column convergence (:func:`block_cg`);
* :mod:`~mlx.numerics.gram` -- the eigendecomposition of ``X'X``, a content-keyed cache of
  it, and the Sylvester solve ``(X'X) W M + l2_reg W = B`` it makes exact;
* :mod:`~mlx.numerics.tron` -- trust-region Newton (LIBLINEAR's TRON);
* :mod:`~mlx.numerics.linops` -- LEML's matrix-free operators on partially observed scores;
* :mod:`~mlx.numerics.losses` -- the losses and their derivatives;
* :mod:`~mlx.numerics.warp` -- WSABIE's compiled WARP epoch;
* :mod:`~mlx.numerics.eigen` -- the top eigenpairs of a symmetric operator known by products;
* :mod:`~mlx.numerics.moments` -- MoM's moments: the whitening and the implicit whitened third
  moment;
* :mod:`~mlx.numerics.tensor_power` -- the robust tensor power method with deflation, Anderson
  and trust-region Newton steps;
* :mod:`~mlx.numerics.adadelta` -- proximal mini-batch descent with an Adadelta-style step
  (LSVV's Algorithm 1);
* :mod:`~mlx.numerics.exc` -- ORLand's EXC objective and its preconditioned descent.
"""
