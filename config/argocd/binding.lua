-- A Karmada ResourceBinding or ClusterResourceBinding (work.karmada.io) on
-- a federator hub. Suspended while federator holds one of its clusters on
-- purpose (a suspension, a freeze, a closed gate, a Rollout stage not
-- reached yet), with what holds which cluster: its Dispatching condition,
-- which the binding controller writes with the binding's Works. Otherwise
-- as Argo CD's built-in check for these kinds judges a Karmada binding:
-- Progressing until every target cluster reported, Degraded when one is
-- unhealthy or failed to apply, Healthy when all are applied and healthy.
local hs = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, condition in ipairs(obj.status.conditions) do
    if condition.type == "Dispatching" and condition.status == "False" then
      hs.status = "Suspended"
      hs.message = condition.message
      return hs
    end
  end
end
local targets = 0
if obj.spec ~= nil and obj.spec.clusters ~= nil then
  targets = #obj.spec.clusters
end
if obj.status == nil or targets == 0 then
  hs.status = "Progressing"
  hs.message = "Waiting for the binding to be scheduled"
  return hs
end
local reported = obj.status.aggregatedStatus or {}
if #reported ~= targets then
  hs.status = "Progressing"
  hs.message = "Waiting for " .. targets .. " clusters to report, " .. #reported .. " did"
  return hs
end
for _, item in ipairs(reported) do
  local failed = item.health == "Unknown" and item.applied ~= true
  if item.health == "Unhealthy" or failed then
    hs.status = "Degraded"
    hs.message = "Cluster " .. tostring(item.clusterName) .. " reports health " .. tostring(item.health)
    if failed then
      hs.message = "Cluster " .. tostring(item.clusterName) .. " is not applied: " .. tostring(item.appliedMessage)
    end
    return hs
  end
end
hs.status = "Healthy"
hs.message = "Applied and healthy in " .. targets .. " clusters"
return hs
