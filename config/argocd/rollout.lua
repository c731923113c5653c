-- A federator Rollout or ClusterRollout (rollouts.federator.dev): Healthy
-- once its revision reached every stage, Suspended while it is held on
-- purpose (paused, a stage waiting for promotion or a gate, its clusters
-- held by a freeze or a suspension), Degraded while only a person can move
-- it on, Progressing while it gets further by itself. It reads the kstatus
-- conditions the rollout controller writes (Ready, Reconciling, Stalled).
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the rollout controller to report"
  return hs
end
if obj.metadata.generation ~= nil and obj.status.observedGeneration ~= obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the rollout controller to observe generation " .. obj.metadata.generation
  return hs
end
local c = {}
for _, condition in ipairs(obj.status.conditions) do
  c[condition.type] = condition
end
if c.Stalled ~= nil and c.Stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = c.Stalled.message
  return hs
end
if c.Ready ~= nil and c.Ready.status == "True" then
  if c.Ready.reason == "RolloutCompleted" or c.Ready.reason == "NoRevision" then
    hs.status = "Healthy"
  else
    hs.status = "Suspended"
  end
  hs.message = c.Ready.message
  return hs
end
hs.status = "Progressing"
if c.Reconciling ~= nil then
  hs.message = c.Reconciling.message
end
return hs
