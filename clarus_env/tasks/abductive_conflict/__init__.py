"""abductive_conflict: is a same-day bundling denial right? The insurer's two records say
"bundled"; the provider record and the NCCI table decide whether the denial stands."""
