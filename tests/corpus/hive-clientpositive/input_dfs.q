dfs -cat ../../data/files/kv1.txt;

