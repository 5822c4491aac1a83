import sys
rows=sorted(tuple(map(int,l.split())) for l in open(sys.argv[1]))
G=2.6e3
t0=rows[0][0]
last={}
out=0
for s,d,w,k,what in rows:
    if w in last and (s-last[w][0])/G>150:
        print("w%d gap %.0f us at %.2f ms (after k=%d, next k=%d, last dur %.0f)"%(w,(s-last[w][0])/G,(last[w][0]-t0)/G/1000,last[w][1],k,last[w][2]/G))
        out+=1
        if out>30: break
    last[w]=(s+d,k,d)
