\set a random_gaussian(1, 10, 2.5) + random_exponential(1, 10, 3.0) * random_zipfian(1, 100, 1.5)
\set b case when :a > 5 then greatest(1, 2, 3.5) else least(-1, abs(-7)) end
\set c hash(:a, 5) # permute(:a, 10, 3) << 2
\if :b >= 2 and not (:c is null)
\sleep 1 ms
\elif :scale = 1
\set d pow(2, 0.5) / sqrt(pi()) % 3
\else
\set e int(double(:a) * ln(exp(1)))
\endif
SELECT :a, :b \gset p_
