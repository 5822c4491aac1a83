import sys, collections
rows=[tuple(map(int,l.split())) for l in open(sys.argv[1])]
rows.sort()
t0=rows[0][0]; t1=max(r[0]+r[1] for r in rows)
GHZ=float(sys.argv[2]) if len(sys.argv)>2 else 2.45
us=lambda x: x/GHZ/1000
print("span ms", us(t1-t0)/1000)
busy=collections.Counter(); cnt=collections.Counter(); longs=collections.Counter(); longt=collections.Counter()
for s,d,w,k,what in rows:
    busy[(w,k)]+=d; cnt[(w,k)]+=1
    if us(d)>200: longs[(w,k)]+=1; longt[(w,k)]+=d
for key in sorted(busy): print(key, "n",cnt[key],"busy ms %.1f"%(us(busy[key])/1000), "long", longs[key], "%.1f ms"%(us(longt[key])/1000))
# timeline in 1ms buckets: which tenant progressed (count of units) per thread
if len(sys.argv)>3:
  b=collections.defaultdict(collections.Counter)
  for s,d,w,k,what in rows:
    b[int(us(s-t0)/1000)][(w,k)]+=1
  for ms in sorted(b)[:int(sys.argv[3])]:
    print(ms, dict(b[ms]))
