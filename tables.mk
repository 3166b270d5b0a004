# Paper tables and figures; included by the Makefile, which defines $(BIN) and $(STAMP).
#
#   make leml-tables6-10   run the table's configs (resumable), then write
#                          results/tables/leml-tables6-10.{md,csv,tex,json} and its figures
#   make tables            every table that can be produced here, then docs/RESULTS.md
#   make results-doc       regenerate docs/RESULTS.md from results/tables/
#
# Each target reads configs/tables/<target>.yaml. `mlx table --check SPEC` says first whether
# the table can be produced here: exit 0 when it can; exit 3 after listing what is missing
# (a config not written yet, a method not implemented yet, data not on MLX_DATA_PATH).
# Called directly, a target that cannot be produced fails with that list; `make tables`
# prints the list, skips the table and goes on. A spec or config that is wrong (exit 2) and
# a failed run fail both.

PAPER_TABLES := leml-table3 leml-tables6-10 leml-table5 leml-tables11-15 leml-table4 \
                mom-table3 lsvv-table5 lsvv-table7 similarity-table1
TABLE_SPECS  ?= configs/tables
TABLES_DIR   ?= results/tables
RESULTS_DOC  ?= docs/RESULTS.md
# Extra options for `mlx run`, e.g. MLX_RUN_ARGS="-j 8".
MLX_RUN_ARGS ?=

.PHONY: tables results-doc tables-status $(PAPER_TABLES)

$(PAPER_TABLES): %: $(STAMP)
	@$(BIN)/mlx table --check $(TABLE_SPECS)/$*.yaml
	@set -e; for c in `$(BIN)/mlx table --list-configs $(TABLE_SPECS)/$*.yaml`; do \
	  echo "$(BIN)/mlx run -q $(MLX_RUN_ARGS) $$c"; \
	  $(BIN)/mlx run -q $(MLX_RUN_ARGS) $$c > /dev/null; \
	done
	$(BIN)/mlx table -o $(TABLES_DIR) $(TABLE_SPECS)/$*.yaml
	$(BIN)/mlx plot -o $(TABLES_DIR) $(TABLE_SPECS)/$*.yaml
	$(EXTRA_FIGURES_$*)

# Figures beside a table's own: runs of their own configs, then `mlx plot` on other axes.
EXTRA_FIGURES_mom-table3 = $(BIN)/python benchmarks/bench_mom.py -o $(TABLES_DIR) --figure \
                           results/mom-bibtex results/mom-delicious
SIM_FIG1 := abalone cpusmall cadata wine-quality-red bank-8fm house-8l
EXTRA_FIGURES_similarity-table1 = set -e; for d in $(SIM_FIG1); do \
	  $(BIN)/mlx run -q $(MLX_RUN_ARGS) configs/similarity/fig1-$$d.yaml > /dev/null; \
	  m=mse; case $$d in wine-*|bank-*|house-*) m=mae;; esac; \
	  $(BIN)/mlx plot -o $(TABLES_DIR) results/similarity-fig1-$$d --x param:n_landmarks \
	    --metric $$m --by similarity; done
EXTRA_FIGURES_lsvv-table7 = set -e; \
	$(BIN)/mlx run -q $(MLX_RUN_ARGS) configs/lsvv/fig2-scene.yaml > /dev/null; \
	$(BIN)/mlx plot -o $(TABLES_DIR) results/lsvv-fig2-scene --x labelled_ratio --metric hamming; \
	$(BIN)/mlx run -q $(MLX_RUN_ARGS) configs/lsvv/fig3-scene.yaml > /dev/null; \
	$(BIN)/mlx plot -o $(TABLES_DIR) results/lsvv-fig3-scene --x param:theta --metric hamming \
	  --by space

tables: $(STAMP)
	@set -e; for t in $(PAPER_TABLES); do \
	  rc=0; $(BIN)/mlx table --check $(TABLE_SPECS)/$$t.yaml || rc=$$?; \
	  if [ $$rc -eq 0 ]; then $(MAKE) --no-print-directory $$t; \
	  elif [ $$rc -eq 3 ]; then echo "tables: skipping $$t (see above)"; \
	  else exit $$rc; fi; \
	done
	@$(MAKE) --no-print-directory results-doc

# What each table still needs, without running anything.
tables-status: $(STAMP)
	@for t in $(PAPER_TABLES); do $(BIN)/mlx table --check $(TABLE_SPECS)/$$t.yaml || true; done

results-doc: $(STAMP)
	$(BIN)/mlx results-doc --tables-dir $(TABLES_DIR) -o $(RESULTS_DOC)
