# SPDX-License-Identifier: MIT
# One markdown table row from the text that `gpualert eval` prints: the
# set's name (-v name=NAME), the logs scored, and macro-F1 and accuracy of
# gpualert, keywords and exit-code (the summary table, before the
# per-system tables).  For eval/run.sh and eval/batch.sh.
/ logs scored, / { logs = $3 }
$1 ~ /^(gpualert|keywords|exit-code)$/ && NF == 4 && !($1 in f) {
	f[$1] = $2; a[$1] = $3
}
END {
	printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name, logs,
	    f["gpualert"], a["gpualert"], f["keywords"], a["keywords"],
	    f["exit-code"], a["exit-code"]
}
