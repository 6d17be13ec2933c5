-- One autocommit UPDATE of a hot row a transaction, for sysbench: the hot-row update of
-- pgbench's one-line scripts, on a table `hot` of --rows rows (id 1..rows, k), which
-- scripts/sysbench-compare creates. Each transaction picks its row uniformly.

sysbench.cmdline.options = {
  rows = {"hot rows (ids 1..rows)", 1},
}

function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

function thread_done()
  con:disconnect()
end

function event()
  con:query(string.format("UPDATE hot SET k = k + 1 WHERE id = %d", sysbench.rand.uniform(1, sysbench.opt.rows)))
end
