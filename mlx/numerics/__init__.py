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
* :mod:`~mlx.numerics.warp` -- WSABIE's compiled WARP epoch.
"""
