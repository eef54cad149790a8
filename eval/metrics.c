/* SPDX-License-Identifier: MIT */
#include "eval.h"

#include <string.h>

const char ga_eval_macro_f1_definition[] =
        "macro-F1 = mean of the per-class F1 over the classes present in the "
        "gold labels (a class never predicted has precision 0)";

void ga_eval_confusion_init(struct ga_eval_confusion *cm)
{
	memset(cm, 0, sizeof(*cm));
}

void ga_eval_confusion_add(struct ga_eval_confusion *cm, enum ga_class gold,
                           enum ga_class pred)
{
	if ((unsigned)gold >= GA_CLASS_COUNT ||
	    (unsigned)pred >= GA_CLASS_COUNT)
		return;
	cm->n[gold][pred]++;
}

static double ratio(unsigned long num, unsigned long den)
{
	return den ? (double)num / (double)den : 0.0;
}

void ga_eval_score(const struct ga_eval_confusion *cm, struct ga_eval_scores *s)
{
	double f1_sum = 0.0;

	memset(s, 0, sizeof(*s));
	for (int g = 0; g < GA_CLASS_COUNT; g++) {
		for (int p = 0; p < GA_CLASS_COUNT; p++) {
			s->cls[g].support += cm->n[g][p];
			s->cls[p].predicted += cm->n[g][p];
			s->total += cm->n[g][p];
		}
		s->cls[g].tp = cm->n[g][g];
		s->correct += cm->n[g][g];
	}
	for (int c = 0; c < GA_CLASS_COUNT; c++) {
		struct ga_eval_class_score *k = &s->cls[c];

		k->precision = ratio(k->tp, k->predicted);
		k->recall = ratio(k->tp, k->support);
		/* 2PR/(P+R) equals 2TP/(support+predicted); the counts form
		 * avoids rounding the two ratios first. */
		k->f1 = ratio(2 * k->tp, k->support + k->predicted);
		if (k->support) {
			s->n_gold_classes++;
			f1_sum += k->f1;
		}
	}
	s->macro_f1 = s->n_gold_classes ? f1_sum / s->n_gold_classes : 0.0;
	s->accuracy = ratio(s->correct, s->total);
}
