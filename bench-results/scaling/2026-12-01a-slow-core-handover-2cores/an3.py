import sys, collections
rows=sorted(tuple(map(int,l.split())) for l in open(sys.argv[1]))
G=2.6e3
t0=rows[0][0]; t1=max(r[0]+r[1] for r in rows)
span=(t1-t0)/G
busy=collections.Counter(); n=collections.Counter()
for s,d,w,k,what in rows: busy[w]+=d/G; n[(w,k)]+=1
print("span us %.0f"%span, {w:"%.2f"%(busy[w]/span) for w in busy}, dict(n))
# switches: count changes of tenant per thread
last={}; sw=collections.Counter()
for s,d,w,k,what in rows:
    if w in last and last[w]!=k: sw[w]+=1
    last[w]=k
print("switches", dict(sw))
