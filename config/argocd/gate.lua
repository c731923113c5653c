-- A federator Gate (gating.federator.dev): Healthy while open, Suspended
-- while closed (it holds what waits for it, on purpose), Degraded while a
-- schedule or a request cannot be read (the gate stays closed until a
-- person fixes it).
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the gate controller to evaluate the gate"
  return hs
end
if obj.metadata.generation ~= nil and obj.status.observedGeneration ~= obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the gate controller to observe generation " .. obj.metadata.generation
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
if c.Opened == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the gate controller to evaluate the gate"
  return hs
end
if c.Opened.status == "True" then
  hs.status = "Healthy"
else
  hs.status = "Suspended"
end
hs.message = c.Opened.message
return hs
