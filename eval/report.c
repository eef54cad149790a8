/* SPDX-License-Identifier: MIT */
/* Reports of a run: text tables, JSON, and an SVG of the confusion
 * matrices. */
#include "eval.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"

static const char *const system_descriptions[GA_EVAL_SYSTEMS] = {
        [GA_EVAL_GPUALERT] = "ordered rules (built-in plus the rules "
                             "directory) with the manifest's exit status",
        [GA_EVAL_KEYWORDS] =
                "unordered keyword matching (eval/keywords.tsv): "
                "the class of the keyword found earliest in the log; none "
                "found: success on exit 0, else unknown",
        [GA_EVAL_EXIT_CODE] = "exit status only: ",
};

/* The classes shown: those that occur as gold or as any system's
 * prediction, in taxonomy order, so that the three matrices share axes. */
static size_t shown_classes(const struct ga_eval *ev,
                            enum ga_class out[GA_CLASS_COUNT])
{
	bool seen[GA_CLASS_COUNT] = {false};
	size_t n = 0;

	for (int s = 0; s < GA_EVAL_SYSTEMS; s++) {
		const struct ga_eval_confusion *cm = ga_eval_confusion(ev, s);

		for (int g = 0; g < GA_CLASS_COUNT; g++)
			for (int p = 0; p < GA_CLASS_COUNT; p++)
				if (cm->n[g][p])
					seen[g] = seen[p] = true;
	}
	for (int c = 0; c < GA_CLASS_COUNT; c++)
		if (seen[c])
			out[n++] = (enum ga_class)c;
	return n;
}

static void describe(struct ga_buf *out, enum ga_eval_system s)
{
	ga_buf_puts(out, system_descriptions[s]);
	if (s == GA_EVAL_EXIT_CODE)
		ga_buf_puts(out, ga_eval_exit_code_description);
}

static void text_header(const struct ga_eval *ev, struct ga_buf *out)
{
	ga_buf_printf(out, "gpualert eval: %zu logs scored, %zu rows skipped\n",
	              ga_eval_count(ev), ga_eval_skipped(ev));
	for (size_t i = 0; i < ga_eval_manifest_count(ev); i++)
		ga_buf_printf(out, "manifest: %s\n", ga_eval_manifest(ev, i));
	ga_buf_puts(out, "systems:\n");
	for (int s = 0; s < GA_EVAL_SYSTEMS; s++) {
		ga_buf_printf(out, "  %-10s ", ga_eval_system_name(s));
		describe(out, s);
		ga_buf_putc(out, '\n');
	}
	ga_buf_printf(out, "%s\n\n", ga_eval_macro_f1_definition);
}

static void text_summary(const struct ga_eval_scores sc[GA_EVAL_SYSTEMS],
                         struct ga_buf *out)
{
	ga_buf_puts(out, "system      macro-F1  accuracy\n");
	for (int s = 0; s < GA_EVAL_SYSTEMS; s++)
		ga_buf_printf(out, "%-10s  %8.4f  %8.4f  (%lu/%lu)\n",
		              ga_eval_system_name(s), sc[s].macro_f1,
		              sc[s].accuracy, sc[s].correct, sc[s].total);
}

static void text_system(const struct ga_eval *ev, enum ga_eval_system s,
                        const struct ga_eval_scores *sc,
                        const enum ga_class *cls, size_t k, struct ga_buf *out)
{
	const struct ga_eval_confusion *cm = ga_eval_confusion(ev, s);

	ga_buf_printf(out, "\n== %s ==\n", ga_eval_system_name(s));
	ga_buf_puts(out, "class          support  predicted  precision  "
	                 "recall      F1\n");
	for (size_t i = 0; i < k; i++) {
		const struct ga_eval_class_score *c = &sc->cls[cls[i]];

		if (c->support)
			ga_buf_printf(out,
			              "%-13s  %7lu  %9lu  %9.4f  %6.4f  "
			              "%6.4f\n",
			              ga_class_name(cls[i]), c->support,
			              c->predicted, c->precision, c->recall,
			              c->f1);
		else if (c->predicted)
			ga_buf_printf(out,
			              "%-13s  %7lu  %9lu  %9.4f  %6s  %6s"
			              "  (not in gold: outside macro-F1)\n",
			              ga_class_name(cls[i]), c->support,
			              c->predicted, c->precision, "-", "-");
	}
	ga_buf_printf(out,
	              "macro-F1 %.4f over %u gold classes; accuracy "
	              "%.4f (%lu/%lu)\n",
	              sc->macro_f1, sc->n_gold_classes, sc->accuracy,
	              sc->correct, sc->total);
	ga_buf_puts(out, "\nconfusion matrix (rows: gold, columns: predicted, "
	                 "numbered as the rows; . = 0)\n");
	ga_buf_printf(out, "%-17s", "");
	for (size_t j = 0; j < k; j++)
		ga_buf_printf(out, " %5zu", j + 1);
	ga_buf_putc(out, '\n');
	for (size_t i = 0; i < k; i++) {
		ga_buf_printf(out, "%2zu %-14s", i + 1, ga_class_name(cls[i]));
		for (size_t j = 0; j < k; j++) {
			unsigned long v = cm->n[cls[i]][cls[j]];

			if (v)
				ga_buf_printf(out, " %5lu", v);
			else
				ga_buf_printf(out, " %5s", ".");
		}
		ga_buf_putc(out, '\n');
	}
}

static bool missed(const struct ga_eval_item *it)
{
	return it->pred[GA_EVAL_GPUALERT] != it->gold;
}

/* Gold -> predicted pairs of gpualert's errors, most frequent first, with
 * the first example of each: what a rule author fixes first. */
static void text_error_patterns(const struct ga_eval *ev, struct ga_buf *out)
{
	unsigned long count[GA_CLASS_COUNT][GA_CLASS_COUNT] = {{0}};
	size_t first[GA_CLASS_COUNT][GA_CLASS_COUNT] = {{0}};
	size_t n = ga_eval_count(ev);

	for (size_t i = n; i-- > 0;) {
		const struct ga_eval_item *it = ga_eval_item(ev, i);

		if (!missed(it))
			continue;
		count[it->gold][it->pred[GA_EVAL_GPUALERT]]++;
		first[it->gold][it->pred[GA_EVAL_GPUALERT]] = i;
	}
	ga_buf_puts(out, "\ngpualert error patterns (gold -> predicted, "
	                 "count, first example):\n");
	for (;;) {
		unsigned long best = 0;
		int bg = 0, bp = 0;

		for (int g = 0; g < GA_CLASS_COUNT; g++)
			for (int p = 0; p < GA_CLASS_COUNT; p++)
				if (count[g][p] > best) {
					best = count[g][p];
					bg = g;
					bp = p;
				}
		if (!best)
			break;
		ga_buf_printf(out, "  %s -> %s: %lu, e.g. %s\n",
		              ga_class_name(bg), ga_class_name(bp), best,
		              ga_eval_item(ev, first[bg][bp])->file);
		count[bg][bp] = 0;
	}
}

static void text_errors(const struct ga_eval *ev, struct ga_buf *out)
{
	size_t n = ga_eval_count(ev), errs = 0;

	for (size_t i = 0; i < n; i++)
		errs += missed(ga_eval_item(ev, i));
	ga_buf_printf(out, "\ngpualert errors (%zu):\n", errs);
	for (size_t i = 0; i < n; i++) {
		const struct ga_eval_item *it = ga_eval_item(ev, i);

		if (!missed(it))
			continue;
		ga_buf_printf(out, "%s:%u: %s: gold %s, predicted %s",
		              it->manifest, it->line, it->file,
		              ga_class_name(it->gold),
		              ga_class_name(it->pred[GA_EVAL_GPUALERT]));
		if (it->rule)
			ga_buf_printf(out, " by rule %s", it->rule);
		ga_buf_putc(out, '\n');
		if (it->evidence && it->evidence_line)
			ga_buf_printf(out, "    line %llu: %s\n",
			              (unsigned long long)it->evidence_line,
			              it->evidence);
		else if (it->evidence)
			ga_buf_printf(out, "    %s\n", it->evidence);
		else
			ga_buf_puts(out, "    (no evidence line)\n");
	}
	if (errs)
		text_error_patterns(ev, out);
}

static void score_all(const struct ga_eval *ev,
                      struct ga_eval_scores sc[GA_EVAL_SYSTEMS])
{
	for (int s = 0; s < GA_EVAL_SYSTEMS; s++)
		ga_eval_score(ga_eval_confusion(ev, s), &sc[s]);
}

void ga_eval_report_text(const struct ga_eval *ev, bool errors,
                         struct ga_buf *out)
{
	struct ga_eval_scores sc[GA_EVAL_SYSTEMS];
	enum ga_class cls[GA_CLASS_COUNT];
	size_t k = shown_classes(ev, cls);

	score_all(ev, sc);
	text_header(ev, out);
	text_summary(sc, out);
	for (int s = 0; s < GA_EVAL_SYSTEMS; s++)
		text_system(ev, s, &sc[s], cls, k, out);
	if (errors)
		text_errors(ev, out);
}

/* ---- JSON -------------------------------------------------------------- */

static void json_num(struct ga_buf *out, int *first, const char *key, double v)
{
	ga_json_key(out, first, key);
	ga_buf_printf(out, "%.6f", v);
}

static void json_count(struct ga_buf *out, int *first, const char *key,
                       unsigned long v)
{
	ga_json_key(out, first, key);
	ga_buf_printf(out, "%lu", v);
}

static void json_system(const struct ga_eval *ev, enum ga_eval_system s,
                        const struct ga_eval_scores *sc,
                        const enum ga_class *cls, size_t k, struct ga_buf *out)
{
	const struct ga_eval_confusion *cm = ga_eval_confusion(ev, s);
	struct ga_buf d;
	int first = 1;

	ga_buf_init(&d);
	describe(&d, s);
	ga_buf_putc(out, '{');
	ga_json_key(out, &first, "name");
	ga_json_str(out, ga_eval_system_name(s));
	ga_json_key(out, &first, "description");
	ga_json_str(out, d.failed ? NULL : d.data);
	ga_buf_finish(&d);
	json_num(out, &first, "macro_f1", sc->macro_f1);
	json_num(out, &first, "accuracy", sc->accuracy);
	json_count(out, &first, "correct", sc->correct);
	json_count(out, &first, "total", sc->total);
	json_count(out, &first, "gold_classes", sc->n_gold_classes);
	ga_json_key(out, &first, "per_class");
	ga_buf_putc(out, '{');
	for (size_t i = 0; i < k; i++) {
		const struct ga_eval_class_score *c = &sc->cls[cls[i]];
		int f = 1;

		if (i)
			ga_buf_putc(out, ',');
		ga_json_str(out, ga_class_name(cls[i]));
		ga_buf_puts(out, ":{");
		json_count(out, &f, "support", c->support);
		json_count(out, &f, "predicted", c->predicted);
		json_num(out, &f, "precision", c->precision);
		json_num(out, &f, "recall", c->recall);
		json_num(out, &f, "f1", c->f1);
		ga_buf_putc(out, '}');
	}
	ga_buf_putc(out, '}');
	/* Rows gold, columns predicted, both in the order of "classes". */
	ga_json_key(out, &first, "confusion");
	ga_buf_putc(out, '[');
	for (size_t i = 0; i < k; i++) {
		ga_buf_puts(out, i ? ",[" : "[");
		for (size_t j = 0; j < k; j++)
			ga_buf_printf(out, "%s%lu", j ? "," : "",
			              cm->n[cls[i]][cls[j]]);
		ga_buf_putc(out, ']');
	}
	ga_buf_puts(out, "]}");
}

static void json_errors(const struct ga_eval *ev, struct ga_buf *out)
{
	bool comma = false;

	ga_buf_putc(out, '[');
	for (size_t i = 0; i < ga_eval_count(ev); i++) {
		const struct ga_eval_item *it = ga_eval_item(ev, i);
		int f = 1;

		if (!missed(it))
			continue;
		if (comma)
			ga_buf_putc(out, ',');
		comma = true;
		ga_buf_putc(out, '{');
		ga_json_key(out, &f, "manifest");
		ga_json_str(out, it->manifest);
		json_count(out, &f, "line", it->line);
		ga_json_key(out, &f, "file");
		ga_json_str(out, it->file);
		ga_json_key(out, &f, "gold");
		ga_json_str(out, ga_class_name(it->gold));
		ga_json_key(out, &f, "predicted");
		ga_json_str(out, ga_class_name(it->pred[GA_EVAL_GPUALERT]));
		ga_json_key(out, &f, "rule");
		ga_json_str(out, it->rule);
		json_count(out, &f, "evidence_line", it->evidence_line);
		ga_json_key(out, &f, "evidence");
		ga_json_str(out, it->evidence);
		ga_buf_putc(out, '}');
	}
	ga_buf_putc(out, ']');
}

void ga_eval_report_json(const struct ga_eval *ev, bool errors,
                         struct ga_buf *out)
{
	struct ga_eval_scores sc[GA_EVAL_SYSTEMS];
	enum ga_class cls[GA_CLASS_COUNT];
	size_t k = shown_classes(ev, cls);
	int first = 1;

	score_all(ev, sc);
	ga_buf_putc(out, '{');
	ga_json_key(out, &first, "manifests");
	ga_buf_putc(out, '[');
	for (size_t i = 0; i < ga_eval_manifest_count(ev); i++) {
		if (i)
			ga_buf_putc(out, ',');
		ga_json_str(out, ga_eval_manifest(ev, i));
	}
	ga_buf_putc(out, ']');
	json_count(out, &first, "logs", ga_eval_count(ev));
	json_count(out, &first, "skipped", ga_eval_skipped(ev));
	ga_json_key(out, &first, "macro_f1_definition");
	ga_json_str(out, ga_eval_macro_f1_definition);
	ga_json_key(out, &first, "classes");
	ga_buf_putc(out, '[');
	for (size_t i = 0; i < k; i++) {
		if (i)
			ga_buf_putc(out, ',');
		ga_json_str(out, ga_class_name(cls[i]));
	}
	ga_buf_putc(out, ']');
	ga_json_key(out, &first, "systems");
	ga_buf_putc(out, '[');
	for (int s = 0; s < GA_EVAL_SYSTEMS; s++) {
		if (s)
			ga_buf_putc(out, ',');
		json_system(ev, s, &sc[s], cls, k, out);
	}
	ga_buf_putc(out, ']');
	if (errors) {
		ga_json_key(out, &first, "errors");
		json_errors(ev, out);
	}
	ga_buf_putc(out, '}');
}

/* ---- SVG --------------------------------------------------------------- */

#define CELL 30
#define LABEL_W 104 /* row labels */
#define TOP 150     /* title, axis title and slanted column labels */
#define GAP 60      /* between panels, room for the last slanted label */
#define FOOT 64

/* White to dark blue as V goes 0 to 1 (ColorBrewer "Blues" ends). */
static void shade(double v, int rgb[3])
{
	static const int lo[3] = {247, 251, 255}, hi[3] = {8, 48, 107};

	/* The value stays within [8, 255], so +0.5 rounds to nearest. */
	for (int i = 0; i < 3; i++)
		rgb[i] = (int)(lo[i] + (hi[i] - lo[i]) * v + 0.5);
}

static void svg_panel(const struct ga_eval *ev, enum ga_eval_system s,
                      const struct ga_eval_scores *sc, const enum ga_class *cls,
                      size_t k, int x0, struct ga_buf *out)
{
	const struct ga_eval_confusion *cm = ga_eval_confusion(ev, s);
	int gx = x0 + LABEL_W, grid = (int)k * CELL;

	ga_buf_printf(out, "<g id=\"%s\">\n", ga_eval_system_name(s));
	ga_buf_printf(out,
	              "<text x=\"%d\" y=\"22\" font-size=\"15\" "
	              "font-weight=\"bold\">%s</text>\n",
	              x0, ga_eval_system_name(s));
	ga_buf_printf(out,
	              "<text x=\"%d\" y=\"40\" font-size=\"12\">"
	              "macro-F1 %.4f, accuracy %.4f (%lu/%lu)</text>\n",
	              x0, sc->macro_f1, sc->accuracy, sc->correct, sc->total);
	ga_buf_printf(out,
	              "<text x=\"%d\" y=\"60\" font-size=\"12\" "
	              "text-anchor=\"middle\" font-style=\"italic\">"
	              "predicted</text>\n",
	              gx + grid / 2);
	ga_buf_printf(out,
	              "<text transform=\"translate(%d,%d) rotate(-90)\" "
	              "font-size=\"12\" text-anchor=\"middle\" "
	              "font-style=\"italic\">gold</text>\n",
	              x0 + 10, TOP + grid / 2);
	for (size_t j = 0; j < k; j++) {
		int cx = gx + (int)j * CELL + CELL / 2;

		ga_buf_printf(out,
		              "<text transform=\"translate(%d,%d) "
		              "rotate(-55)\" font-size=\"11\">%s</text>\n",
		              cx + 3, TOP - 6, ga_class_name(cls[j]));
	}
	for (size_t i = 0; i < k; i++) {
		unsigned long row = 0;
		int y = TOP + (int)i * CELL;

		for (size_t j = 0; j < k; j++)
			row += cm->n[cls[i]][cls[j]];
		ga_buf_printf(out,
		              "<text x=\"%d\" y=\"%d\" font-size=\"11\" "
		              "text-anchor=\"end\">%s</text>\n",
		              gx - 6, y + CELL / 2 + 4, ga_class_name(cls[i]));
		for (size_t j = 0; j < k; j++) {
			unsigned long v = cm->n[cls[i]][cls[j]];
			double r = row ? (double)v / (double)row : 0.0;
			int rgb[3], x = gx + (int)j * CELL;

			shade(r, rgb);
			ga_buf_printf(out,
			              "<rect x=\"%d\" y=\"%d\" width=\"%d\" "
			              "height=\"%d\" fill=\"#%02x%02x%02x\" "
			              "stroke=\"%s\" stroke-width=\"%s\"/>\n",
			              x, y, CELL, CELL, rgb[0], rgb[1], rgb[2],
			              i == j ? "#555555" : "#dddddd",
			              i == j ? "1.2" : "0.6");
			if (v)
				ga_buf_printf(
				        out,
				        "<text x=\"%d\" y=\"%d\" "
				        "font-size=\"%d\" text-anchor="
				        "\"middle\" fill=\"%s\">%lu</text>\n",
				        x + CELL / 2, y + CELL / 2 + 4,
				        v >= 1000 ? 8 : 10,
				        r > 0.5 ? "#ffffff" : "#000000", v);
		}
	}
	ga_buf_puts(out, "</g>\n");
}

void ga_eval_report_svg(const struct ga_eval *ev, struct ga_buf *out)
{
	struct ga_eval_scores sc[GA_EVAL_SYSTEMS];
	enum ga_class cls[GA_CLASS_COUNT];
	size_t k = shown_classes(ev, cls);
	int panel = LABEL_W + (int)k * CELL + GAP;
	int width = GA_EVAL_SYSTEMS * panel + 10;
	int height = TOP + (int)k * CELL + FOOT;
	int fy = TOP + (int)k * CELL + 24;

	if (width < 720)
		width = 720; /* room for the footnote with few classes */
	score_all(ev, sc);
	ga_buf_printf(out,
	              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	              "<svg xmlns=\"http://www.w3.org/2000/svg\" "
	              "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	              "font-family=\"DejaVu Sans, Helvetica, Arial, "
	              "sans-serif\">\n",
	              width, height, width, height);
	ga_buf_puts(out, "<title>gpualert eval: confusion matrices</title>\n");
	ga_buf_printf(out,
	              "<rect width=\"%d\" height=\"%d\" "
	              "fill=\"#ffffff\"/>\n",
	              width, height);
	for (int s = 0; s < GA_EVAL_SYSTEMS; s++)
		svg_panel(ev, s, &sc[s], cls, k, 10 + s * panel, out);
	ga_buf_printf(out,
	              "<text x=\"10\" y=\"%d\" font-size=\"11\" "
	              "fill=\"#333333\">%zu logs from ",
	              fy, ga_eval_count(ev));
	for (size_t i = 0; i < ga_eval_manifest_count(ev); i++) {
		const char *name = ga_eval_manifest(ev, i);

		if (i)
			ga_buf_puts(out, ", ");
		ga_buf_put_markup(out, name, strlen(name));
	}
	ga_buf_printf(out,
	              ". Cells: counts, shaded by the share of the gold "
	              "class (row-normalised).</text>\n"
	              "<text x=\"10\" y=\"%d\" font-size=\"11\" "
	              "fill=\"#333333\">",
	              fy + 18);
	ga_buf_put_markup(out, ga_eval_macro_f1_definition,
	                  strlen(ga_eval_macro_f1_definition));
	ga_buf_puts(out, ".</text>\n</svg>\n");
}
